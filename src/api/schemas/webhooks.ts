import { z } from 'zod';

/**
 * Response schemas of the v1 webhooks and integrations routes (the contract's "Webhook" and
 * "Integration" tables). `z.object` strips unknown keys, so a field the service adds later does
 * not break the client.
 */

/** A webhook as `GET /projects/:id/webhooks` lists it: no secret (the service shows it only once). */
export const webhookSchema = z.object({
  id: z.string(),
  /** Shown in the project dashboard. */
  label: z.string(),
  /** The delivery URL. */
  url: z.string(),
});

/** A webhook of the calling application, as listed. */
export type Webhook = z.infer<typeof webhookSchema>;

/** The answer of `GET /projects/:id/webhooks`. */
export const webhookListSchema = z.array(webhookSchema);

/** The answer of `POST /projects/:id/webhooks` (201): the webhook and its signing secret. */
export const createdWebhookSchema = webhookSchema.extend({
  /** The signing secret (`whs_...`); this answer is the only place it is shown. */
  secret: z.string(),
});

/** A webhook just created, with the only copy of its signing secret. */
export type CreatedWebhook = z.infer<typeof createdWebhookSchema>;

/** The answer of `POST /projects/:id/webhooks/:webhook_id/rotate`: the new secret. */
export const rotatedWebhookSecretSchema = z.object({
  /** The new signing secret; the previous one stopped working when this answer was made. */
  secret: z.string(),
});

/** The new secret of a rotated webhook. */
export type RotatedWebhookSecret = z.infer<typeof rotatedWebhookSecretSchema>;

/** An integration available to a project (`GET /projects/:id/integrations`). */
export const integrationSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  icon_url: z.string(),
  /** Connected to this project (by any application). */
  connected: z.boolean(),
});

/** An integration available to a project, with whether it is connected. */
export type Integration = z.infer<typeof integrationSchema>;

/** The answer of `GET /projects/:id/integrations`. */
export const integrationListSchema = z.array(integrationSchema);
