import { webhookInputProblems } from '../../contract/webhook-url.js';
import { type ApiContext, type CallOptions, checkRequest } from '../context.js';
import { projectSegment, requireCredential } from '../credentials.js';
import { idSegment, settleAfterRetry } from './shared.js';
import {
  type CreatedWebhook,
  createdWebhookSchema,
  type RotatedWebhookSecret,
  rotatedWebhookSecretSchema,
  type Webhook,
  webhookListSchema,
} from '../schemas/webhooks.js';

/** The body of {@link WebhooksApi.create}, checked before sending. */
export interface CreateWebhookInput {
  /** Shown in the project dashboard: 1 to 100 characters. */
  label: string;
  /** Where votes are delivered: an absolute `https://` URL of at most 2048 characters. */
  url: string;
  /**
   * Also accept `http://` on 127.0.0.1, localhost or [::1], for a local receiver against an
   * emulator started with `--allow-http-loopback`. The real service accepts https only. Never
   * sent. Default false.
   */
  allowHttpLoopback?: boolean;
}

/**
 * The v1 webhooks operations: the calling application's own vote webhooks on a project. They need
 * an OAuth access token (the contract's "OAuth access token required"); any other credential is
 * refused locally. `projectId` defaults to the access token's project when the client knows it.
 */
export function createWebhooksApi(ctx: ApiContext) {
  function base(operation: string, projectId: string | undefined): string {
    requireCredential(ctx.credential, operation, ['oauth']);
    return `/projects/${projectSegment(ctx.credential, operation, projectId)}/webhooks`;
  }

  async function list(projectId?: string, options?: CallOptions): Promise<Webhook[]> {
    const operation = 'webhooks.list';
    return ctx.v1({ operation, method: 'GET', path: base(operation, projectId), idempotent: true, response: webhookListSchema, options });
  }

  return {
    /** The webhooks this application created on the project (never their secrets). Scope `project.webhooks.read`. */
    list,

    /**
     * Creates a vote webhook; the answer holds the only copy of its signing secret. The label and
     * URL are checked before sending (`ValidationError`, subject `request`). Never retried once it
     * may have reached the service: a second create would make a second webhook. 409
     * (`ConflictError`) when the project reached its webhook limit. Scope `project.webhooks.write`.
     */
    async create(input: CreateWebhookInput, projectId?: string, options?: CallOptions): Promise<CreatedWebhook> {
      const operation = 'webhooks.create';
      const path = base(operation, projectId);
      // `?? {}`: a plain-JavaScript caller's missing body reads as missing fields, not a TypeError.
      const given: Partial<CreateWebhookInput> = input ?? {};
      const problems = webhookInputProblems(given, { allowHttpLoopback: given.allowHttpLoopback === true });
      checkRequest(operation, problems.map((problem) => ({ path: problem.field, message: problem.message })));
      return ctx.v1({
        operation,
        method: 'POST',
        path,
        json: { label: input.label, url: input.url },
        idempotent: false,
        response: createdWebhookSchema,
        options,
      });
    },

    /**
     * Deletes a webhook this application created; 404 (`NotFoundError`) for any other. Retried
     * (DELETE); when a retry finds it gone and the list confirms it, the delete succeeded.
     * Scope `project.webhooks.write`.
     */
    async delete(webhookId: string, projectId?: string, options?: CallOptions): Promise<void> {
      const operation = 'webhooks.delete';
      const path = `${base(operation, projectId)}/${idSegment(operation, 'webhookId', webhookId)}`;
      await settleAfterRetry(ctx.v1({ operation, method: 'DELETE', path, idempotent: true, options }), 404, async () =>
        (await list(projectId, options)).every((webhook) => webhook.id !== webhookId),
      );
    },

    /**
     * Gives the webhook a new signing secret; the previous one stops working at once. Not retried
     * once it may have reached the service: the answer carries the only copy of the new secret.
     * Scope `project.webhooks.write`.
     */
    async rotate(webhookId: string, projectId?: string, options?: CallOptions): Promise<RotatedWebhookSecret> {
      const operation = 'webhooks.rotate';
      const path = `${base(operation, projectId)}/${idSegment(operation, 'webhookId', webhookId)}/rotate`;
      return ctx.v1({ operation, method: 'POST', path, idempotent: false, response: rotatedWebhookSecretSchema, options });
    },

    /**
     * Sends a `webhook.test` event and resolves once the destination accepted it; 409
     * (`ConflictError`) when it rejected it or could not be reached. Retried like an idempotent
     * call: it changes nothing on the service, and a second test event is harmless to a receiver.
     * Scope `project.webhooks.write`.
     */
    async test(webhookId: string, projectId?: string, options?: CallOptions): Promise<void> {
      const operation = 'webhooks.test';
      const path = `${base(operation, projectId)}/${idSegment(operation, 'webhookId', webhookId)}/test`;
      await ctx.v1({ operation, method: 'POST', path, idempotent: true, options });
    },
  };
}

/** The v1 webhooks operations of a {@link ListingClient}. */
export type WebhooksApi = ReturnType<typeof createWebhooksApi>;
