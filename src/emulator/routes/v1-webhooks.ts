import { webhookInputProblems } from '../../contract/webhook-url.js';
import type { RequestContext } from '../http.js';
import { empty, fail, json, readJsonObject } from '../http.js';
import { eventProject, eventUser, newWebhookSecret, projectWebhooks, webhookTarget } from '../model.js';
import type { Route } from '../router.js';
import type { WebhookRecord } from '../state.js';
import { authorizeDelegated, type DelegatedAccess } from './delegated-access.js';

/** A webhook as listed (the secret only appears in the create and rotate responses). */
function webhookJson(webhook: WebhookRecord) {
  return { id: webhook.id, label: webhook.label, url: webhook.url };
}

/**
 * The webhook `:webhook_id` of the project, if the calling application created it. Dashboard,
 * other applications' and integration webhooks look the same as missing ones: 404.
 */
function ownWebhook(ctx: RequestContext, access: DelegatedAccess): WebhookRecord {
  const webhook = ctx.emu.state.webhooks.get(ctx.params.webhook_id!);
  if (!webhook || webhook.project_id !== access.project.id || webhook.client_id !== access.clientId) {
    fail(404, 'webhook not found, or it was not created by this application');
  }
  return webhook;
}

function list(ctx: RequestContext) {
  const access = authorizeDelegated(ctx, 'project.webhooks.read');
  const own = projectWebhooks(ctx.emu, access.project.id).filter((w) => w.client_id === access.clientId);
  return json(200, own.map(webhookJson));
}

function create(ctx: RequestContext) {
  const access = authorizeDelegated(ctx, 'project.webhooks.write');
  const body = readJsonObject(ctx);
  const problems = webhookInputProblems(body, { allowHttpLoopback: ctx.emu.settings.allowHttpLoopback });
  if (problems.length > 0) fail(422, problems.map((p) => p.message).join('; '));
  const { emu } = ctx;
  // The limit counts every webhook of the project: other applications' and integrations' too.
  const limit = emu.settings.webhooksPerProject;
  if (projectWebhooks(emu, access.project.id).length >= limit) {
    fail(409, `the project reached its webhook limit (${limit})`);
  }
  const webhook: WebhookRecord = {
    id: emu.nextId(),
    project_id: access.project.id,
    client_id: access.clientId,
    connection_id: null,
    label: body.label as string,
    url: body.url as string,
    secret: newWebhookSecret(),
    created_at: emu.clock.now(),
  };
  emu.state.webhooks.set(webhook.id, webhook);
  return json(201, { ...webhookJson(webhook), secret: webhook.secret });
}

function remove(ctx: RequestContext) {
  const access = authorizeDelegated(ctx, 'project.webhooks.write');
  ctx.emu.state.webhooks.delete(ownWebhook(ctx, access).id);
  return empty();
}

function rotate(ctx: RequestContext) {
  const access = authorizeDelegated(ctx, 'project.webhooks.write');
  const webhook = ownWebhook(ctx, access);
  // Every delivery started from now on signs with the record's new secret. (Retries of a delivery
  // already under way keep the secret it started with: deliveries.ts copies the target.)
  webhook.secret = newWebhookSecret();
  return json(200, { secret: webhook.secret });
}

async function test(ctx: RequestContext) {
  const access = authorizeDelegated(ctx, 'project.webhooks.write');
  const webhook = ownWebhook(ctx, access);
  const data = { project: eventProject(access.project), user: eventUser(access.actingUser) };
  // One try, no retries: the caller is waiting for the answer.
  const { result } = await ctx.emu.deliveries.sendOnce(webhookTarget(webhook), 'webhook.test', data);
  if (result.status !== null && result.status >= 200 && result.status < 300) return empty();
  const why = result.status !== null ? `answered ${result.status}` : `could not be reached (${result.error ?? 'no answer'})`;
  return fail(409, `the destination rejected the test event: it ${why}`);
}

/** v1 webhooks: list, create, delete, rotate, test (only the calling application's; OAuth access tokens only). */
export const v1WebhookRoutes: Route[] = [
  { method: 'GET', pattern: '/projects/:project_id/webhooks', handler: list },
  { method: 'POST', pattern: '/projects/:project_id/webhooks', handler: create },
  { method: 'DELETE', pattern: '/projects/:project_id/webhooks/:webhook_id', handler: remove },
  { method: 'POST', pattern: '/projects/:project_id/webhooks/:webhook_id/rotate', handler: rotate },
  { method: 'POST', pattern: '/projects/:project_id/webhooks/:webhook_id/test', handler: test },
];
