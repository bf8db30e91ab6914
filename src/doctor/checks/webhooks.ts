import { createServer } from 'node:net';
import { formatAddress, ListenError } from '../../http/listen-error.js';
import { RECEIVER_DEFAULTS } from '../../webhooks/receiver.js';
import { fail, ok, skip, warn, type CheckOutcome, type DoctorCheck, type DoctorDeps } from '../types.js';
import { askLocal, localUrl } from './local-http.js';
import { acceptedSecrets, testDelivery } from './webhook-secrets.js';

export const WEBHOOKS_OFF = 'webhooks.enabled is false: no receiver runs';
const LISTEN_FIX =
  'stop the other program, or set webhooks.listen (LISTING_AGENT_WEBHOOKS_LISTEN) to a free port (and move the proxy or tunnel with it)';

/** `webhooks.secret`: how many secrets the receiver accepts and where they are; never one of them. */
export const webhookSecretCheck: DoctorCheck = {
  name: 'webhooks.secret',
  paths: ['webhooks.secrets', 'webhooks.legacyAuthorization'],
  async run(deps): Promise<CheckOutcome> {
    const { webhooks } = deps.config;
    if (!webhooks.enabled) return skip(WEBHOOKS_OFF);
    const found = await acceptedSecrets(deps);
    const { counts } = found;
    const details = { ...counts, legacyAuthorization: found.legacy !== undefined };
    const places = [`${counts.config} in webhooks.secrets`];
    if (counts.secretFile > 0) places.push(`${counts.secretFile} in the secret file`);
    if (counts.redis > 0) places.push(`${counts.redis} in Redis`);
    const legacy = found.legacy === undefined ? '' : '; legacy v0 Authorization set';
    if (found.v1.length === 0 && found.legacy === undefined) {
      return fail(
        'no webhook secret: every delivery would be refused',
        "add the webhook's secret (whs_...) to webhooks.secrets (LISTING_AGENT_WEBHOOKS_SECRETS), or rotate one in ('listing-agent " +
          "webhooks rotate')",
        details,
      );
    }
    if (found.problems.length > 0) {
      return warn(
        `${found.v1.length} v1 secrets (${places.join(', ')})${legacy}; but ${found.problems.join('; ')}`,
        'fix or delete what is named: the other secrets still work',
        details,
      );
    }
    const odd = webhooks.secrets.filter((secret) => !secret.startsWith('whs_')).length;
    if (odd > 0) {
      return warn(
        `${odd} of the ${counts.config} secrets in webhooks.secrets do not start with whs_, as the service's webhook secrets do`,
        "copy the secret the service showed when the webhook was created or rotated (not the project token or the webhook's ID)",
        details,
      );
    }
    if (found.v1.length === 0) return ok('legacy v0 Authorization set, no v1 secret: signed v1 deliveries would be refused', details);
    return ok(
      `${found.v1.length} v1 ${found.v1.length === 1 ? 'secret' : 'secrets'} (${places.join(', ')})${legacy}; none is shown`,
      details,
    );
  },
};

/** Who has `webhooks.listen`. */
export type ReceiverPort =
  | { kind: 'free' }
  /** A listing-agent receiver with an accepted secret answered a signed test there. */
  | { kind: 'ours'; ms: number }
  | { kind: 'taken'; said: string }
  /** Cannot listen there at all (not an address of this machine, a privileged port). */
  | { kind: 'unusable'; message: string };

/** Listens on `listen` for a moment: resolves undefined when it could, else the error. */
function tryListen(host: string, port: number): Promise<NodeJS.ErrnoException | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => resolve(error));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

async function inspectPort(deps: DoctorDeps): Promise<ReceiverPort> {
  const { listen, path } = deps.config.webhooks;
  const error = await tryListen(listen.host, listen.port);
  if (error === undefined) return { kind: 'free' };
  if (error.code !== 'EADDRINUSE')
    return { kind: 'unusable', message: new ListenError('webhook receiver', listen, error, RECEIVER_DEFAULTS.setting).message };
  const delivery = testDelivery(await acceptedSecrets(deps), deps.now());
  if (delivery === undefined) return { kind: 'taken', said: 'no secret to ask it with' };
  const answer = await askLocal(localUrl(listen, path), {
    method: 'POST',
    headers: delivery.headers,
    body: delivery.body,
    timeoutMs: deps.timeoutMs,
  });
  if (answer.kind === 'answer' && answer.status >= 200 && answer.status < 300) return { kind: 'ours', ms: answer.ms };
  const said =
    answer.kind === 'answer'
      ? `it answered ${answer.status} to a signed ${delivery.kind} on ${path}${answer.status === 401 ? ' (a receiver with other ' +
        'secrets?)' : ''}`
      : answer.kind === 'refused'
        ? 'it refused the connection'
        : `it did not answer a ${delivery.kind}: ${answer.reason}`;
  return { kind: 'taken', said };
}

const ports = new WeakMap<DoctorDeps, Promise<ReceiverPort>>();

/** Who has `webhooks.listen`, found once per `deps` (the probe waits for it before it listens there). */
export function receiverPort(deps: DoctorDeps): Promise<ReceiverPort> {
  let promise = ports.get(deps);
  if (promise === undefined) {
    promise = inspectPort(deps);
    ports.set(deps, promise);
  }
  return promise;
}

/** `webhooks.port`: `webhooks.listen` is free, or a running agent's receiver answers there. */
export const webhookPortCheck: DoctorCheck = {
  name: 'webhooks.port',
  paths: ['webhooks.listen'],
  async run(deps): Promise<CheckOutcome> {
    const { webhooks } = deps.config;
    if (!webhooks.enabled) return skip(WEBHOOKS_OFF);
    const address = formatAddress(webhooks.listen);
    if (webhooks.listen.port === 0) return skip('webhooks.listen has port 0: the receiver takes a free port at its start');
    const port = await receiverPort(deps);
    switch (port.kind) {
      case 'free':
        return ok(`${address} is free: the receiver can listen there (no agent's receiver runs now)`, { listen: address, holder: 'none' });
      case 'ours':
        return ok(`a listing-agent receiver answers on ${address} and accepts this config's secret (a running agent), in ${port.ms} ms`, {
          listen: address,
          holder: 'agent',
        });
      case 'taken':
        return fail(`${address} is taken by another program: ${port.said}`, LISTEN_FIX, { listen: address, holder: 'other' });
      case 'unusable':
        return fail(
          port.message,
          'set webhooks.listen (LISTING_AGENT_WEBHOOKS_LISTEN) to an address of this machine and a port above 1023',
          { listen: address },
        );
    }
  },
};
