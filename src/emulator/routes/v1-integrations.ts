import { webhookUrlProblem } from '../../contract/webhook-url.js';
import type { EmulatorContext } from '../context.js';
import type { AttemptResult } from '../deliveries.js';
import type { RequestContext } from '../http.js';
import { empty, fail, json } from '../http.js';
import { eventProject, eventUser, newWebhookSecret, projectWebhooks } from '../model.js';
import type { Route } from '../router.js';
import type { ConnectionRecord, IntegrationRecord, ProjectRecord } from '../state.js';
import { authorizeDelegated } from './delegated-access.js';

/** The event route every integration must take (decisions.md: `routes: ["vote.create"]`). */
const REQUIRED_ROUTE = 'vote.create';

function connectionOf(emu: EmulatorContext, projectId: string, integrationId: string): ConnectionRecord | undefined {
  for (const connection of emu.state.connections.values()) {
    if (connection.project_id === projectId && connection.integration_id === integrationId) return connection;
  }
  return undefined;
}

/** Why a connection cannot be made now (already connected, webhook limit), or null. */
function connectBlocker(emu: EmulatorContext, project: ProjectRecord, integration: IntegrationRecord): string | null {
  if (connectionOf(emu, project.id, integration.id)) return 'the integration is already connected to this project';
  const limit = emu.settings.webhooksPerProject;
  if (projectWebhooks(emu, project.id).length >= limit) return `the project reached its webhook limit (${limit})`;
  return null;
}

/** The webhook URL of an accepted handshake answer, or why the answer is a rejection. */
function readHandshake(emu: EmulatorContext, result: AttemptResult): { ok: true; webhookUrl: string } | { ok: false; why: string } {
  if (result.status === null) return { ok: false, why: `the integration could not be reached (${result.error ?? 'no answer'})` };
  if (result.status < 200 || result.status > 299) return { ok: false, why: `the integration answered ${result.status}` };
  const body = result.body;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, why: 'the integration did not answer with a JSON object {webhook_url, routes}' };
  }
  const { webhook_url: webhookUrl, routes } = body as Record<string, unknown>;
  const urlProblem = webhookUrlProblem(webhookUrl, { allowHttpLoopback: emu.settings.allowHttpLoopback });
  if (urlProblem !== null) return { ok: false, why: `webhook_url: ${urlProblem}` };
  if (!Array.isArray(routes) || !routes.every((r) => typeof r === 'string')) {
    return { ok: false, why: 'routes must be an array of event names' };
  }
  if (!routes.includes(REQUIRED_ROUTE)) return { ok: false, why: `routes must contain '${REQUIRED_ROUTE}'` };
  return { ok: true, webhookUrl: webhookUrl as string };
}

function integrationParam(ctx: RequestContext): IntegrationRecord {
  const integration = ctx.emu.state.integrations.get(ctx.params.integration_id!);
  if (!integration) fail(404, 'integration not found');
  return integration;
}

/** Sends `integration.delete` (with retries) so the integration forgets the connection. */
function sendDelete(emu: EmulatorContext, integration: IntegrationRecord, projectId: string, connectionId: string, secret: string): void {
  const target = { url: integration.url, secret, project_id: projectId, webhook_id: null };
  void emu.deliveries.deliver(target, 'integration.delete', { connection_id: connectionId });
}

function list(ctx: RequestContext) {
  const { project } = authorizeDelegated(ctx, 'project.integrations.read', { allowApplicationToken: true });
  const integrations = [...ctx.emu.state.integrations.values()].map((i) => ({
    id: i.id,
    name: i.name,
    description: i.description,
    icon_url: i.icon_url,
    connected: connectionOf(ctx.emu, project.id, i.id) !== undefined,
  }));
  return json(200, integrations);
}

async function connect(ctx: RequestContext) {
  const { project, clientId, actingUser } = authorizeDelegated(ctx, 'project.integrations.write', { allowApplicationToken: true });
  const { emu } = ctx;
  const integration = integrationParam(ctx);
  const blocked = connectBlocker(emu, project, integration);
  if (blocked !== null) fail(409, blocked);

  const connectionId = emu.nextId();
  const secret = newWebhookSecret();
  const target = { url: integration.url, secret, project_id: project.id, webhook_id: null };
  const data = { connection_id: connectionId, webhook_secret: secret, project: eventProject(project), user: eventUser(actingUser) };
  const { result } = await emu.deliveries.sendOnce(target, 'integration.create', data);
  const handshake = readHandshake(emu, result);
  if (!handshake.ok) fail(409, `handshake rejected: ${handshake.why}`);

  // Another request may have connected, or filled the webhook slots, while the handshake ran.
  const blockedNow = connectBlocker(emu, project, integration);
  if (blockedNow !== null) {
    // The integration accepted a connection that will not exist: tell it to forget it.
    sendDelete(emu, integration, project.id, connectionId, secret);
    fail(409, blockedNow);
  }
  const now = emu.clock.now();
  const webhookId = emu.nextId();
  emu.state.webhooks.set(webhookId, {
    id: webhookId,
    project_id: project.id,
    client_id: null,
    connection_id: connectionId,
    label: integration.name,
    url: handshake.webhookUrl,
    secret,
    created_at: now,
  });
  emu.state.connections.set(connectionId, {
    id: connectionId,
    integration_id: integration.id,
    project_id: project.id,
    client_id: clientId,
    user_id: actingUser.id,
    webhook_id: webhookId,
    secret,
    created_at: now,
  });
  return empty();
}

function disconnect(ctx: RequestContext) {
  const { project, clientId } = authorizeDelegated(ctx, 'project.integrations.write', { allowApplicationToken: true });
  const { emu } = ctx;
  const connection = connectionOf(emu, project.id, ctx.params.integration_id!);
  if (!connection || connection.client_id !== clientId) {
    fail(404, 'the integration is not connected to this project by this application');
  }
  emu.state.connections.delete(connection.id);
  emu.state.webhooks.delete(connection.webhook_id);
  const integration = emu.state.integrations.get(connection.integration_id);
  if (integration) sendDelete(emu, integration, project.id, connection.id, connection.secret);
  return empty();
}

/** v1 integrations: list, connect (handshake), disconnect (`integration.delete`). OAuth access or application tokens. */
export const v1IntegrationRoutes: Route[] = [
  { method: 'GET', pattern: '/projects/:project_id/integrations', handler: list },
  { method: 'PUT', pattern: '/projects/:project_id/integrations/:integration_id', handler: connect },
  { method: 'DELETE', pattern: '/projects/:project_id/integrations/:integration_id', handler: disconnect },
];
