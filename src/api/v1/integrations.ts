import { type ApiContext, type CallOptions } from '../context.js';
import { projectSegment, requireCredential } from '../credentials.js';
import { type Integration, integrationListSchema } from '../schemas/webhooks.js';
import { idSegment, settleAfterRetry } from './shared.js';

/**
 * The v1 integrations operations. They take an OAuth access token or an application token (a
 * project token is refused locally). `projectId` defaults to the access token's project when the
 * client knows it; an application token needs it.
 */
export function createIntegrationsApi(ctx: ApiContext) {
  function base(operation: string, projectId: string | undefined): string {
    requireCredential(ctx.credential, operation, ['oauth', 'application']);
    return `/projects/${projectSegment(ctx.credential, operation, projectId)}/integrations`;
  }

  async function list(projectId?: string, options?: CallOptions): Promise<Integration[]> {
    const operation = 'integrations.list';
    return ctx.v1({
      operation,
      method: 'GET',
      path: base(operation, projectId),
      idempotent: true,
      response: integrationListSchema,
      options,
    });
  }

  /** Whether the listed integration is `connected`; false when it is not listed at all. */
  async function listedAs(connected: boolean, integrationId: string, projectId: string | undefined, options: CallOptions | undefined) {
    const found = (await list(projectId, options)).find((integration) => integration.id === integrationId);
    return found !== undefined && found.connected === connected;
  }

  return {
    /** The integrations available for the project, each with `connected`. Scope `project.integrations.read`. */
    list,

    /**
     * Connects an integration: the service runs its handshake and resolves once it was accepted.
     * 409 (`ConflictError`) when already connected, the webhook limit is reached or the handshake
     * was rejected; 404 for an unknown integration. Retried (PUT); when a retry meets "already
     * connected" and the list shows it connected, the connect succeeded.
     * Scope `project.integrations.write`.
     */
    async connect(integrationId: string, projectId?: string, options?: CallOptions): Promise<void> {
      const operation = 'integrations.connect';
      const path = `${base(operation, projectId)}/${idSegment(operation, 'integrationId', integrationId)}`;
      await settleAfterRetry(ctx.v1({ operation, method: 'PUT', path, idempotent: true, options }), 409, () =>
        listedAs(true, integrationId, projectId, options),
      );
    },

    /**
     * Disconnects an integration this application connected; the integration gets an
     * `integration.delete` event. 404 (`NotFoundError`) when it is not connected by this
     * application. Retried (DELETE); when a retry finds it gone and the list shows it disconnected,
     * the disconnect succeeded. Scope `project.integrations.write`.
     */
    async disconnect(integrationId: string, projectId?: string, options?: CallOptions): Promise<void> {
      const operation = 'integrations.disconnect';
      const path = `${base(operation, projectId)}/${idSegment(operation, 'integrationId', integrationId)}`;
      await settleAfterRetry(ctx.v1({ operation, method: 'DELETE', path, idempotent: true, options }), 404, () =>
        listedAs(false, integrationId, projectId, options),
      );
    },
  };
}

/** The v1 integrations operations of a {@link ListingClient}. */
export type IntegrationsApi = ReturnType<typeof createIntegrationsApi>;
