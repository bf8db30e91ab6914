import type { ListingClient } from '../api/client.js';
import type { ListingClientOptions } from '../api/client-context.js';
import {
  announcementsApi,
  commandsApi,
  integrationsApi,
  metricsApi,
  projectsApi,
  serviceClient,
  usersApi,
  v0Api,
  votesApi,
  webhooksApi,
} from './lazy.js';

/**
 * The agent's own service client: what `createListingClient` makes, with each group of calls
 * (and its response schemas) loaded and made at its first use (agent/lazy.ts), so that an agent
 * posting stats inside a bot loads none of the votes, webhooks, users, commands... calls it never
 * makes. The same calls, the same context and transport shared by every group.
 */
export function createAgentClient(options: ListingClientOptions): ListingClient {
  const { credentialKind, ctx, close } = serviceClient.get().createClientContext(options);
  /** `make`'s group, made once, at the first read. */
  const once = <T>(make: () => T): (() => T) => {
    let made: T | undefined;
    return () => (made ??= make());
  };
  const projects = once(() => projectsApi.get().createProjectsApi(ctx));
  const commands = once(() => commandsApi.get().createCommandsApi(ctx));
  const announcements = once(() => announcementsApi.get().createAnnouncementsApi(ctx));
  const metrics = once(() => metricsApi.get().createMetricsApi(ctx));
  const votes = once(() => votesApi.get().createVotesApi(ctx));
  const webhooks = once(() => webhooksApi.get().createWebhooksApi(ctx));
  const integrations = once(() => integrationsApi.get().createIntegrationsApi(ctx));
  const users = once(() => usersApi.get().createUsersApi(ctx));
  const v0 = once(() => v0Api.get().createV0Api(ctx));
  return {
    credentialKind,
    get projects() {
      return projects();
    },
    get commands() {
      return commands();
    },
    get announcements() {
      return announcements();
    },
    get metrics() {
      return metrics();
    },
    get votes() {
      return votes();
    },
    get webhooks() {
      return webhooks();
    },
    get integrations() {
      return integrations();
    },
    get users() {
      return users();
    },
    get v0() {
      return v0();
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}
