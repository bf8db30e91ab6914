import { redactUrl } from '../../api/redact.js';
import { formatAddress } from '../../http/listen-error.js';
import { createWebhookReceiver, type ReceivedDelivery } from '../../webhooks/receiver.js';
import { fail, ok, skip, warn, type CheckOutcome, type DoctorCheck, type DoctorDeps } from '../types.js';
import { askLocal, type LocalAnswer } from './local-http.js';
import { acceptedSecrets, testDelivery, type TestDelivery } from './webhook-secrets.js';
import { receiverPort, WEBHOOKS_OFF } from './webhooks.js';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/;

/** `webhooks.url`: what can be told of `webhooks.publicUrl` with the credentials the config holds. */
export const webhookUrlCheck: DoctorCheck = {
  name: 'webhooks.url',
  paths: ['webhooks.publicUrl'],
  async run(deps): Promise<CheckOutcome> {
    const { webhooks } = deps.config;
    if (!webhooks.enabled) return skip(WEBHOOKS_OFF);
    if (webhooks.publicUrl === undefined) {
      return skip(
        `webhooks.publicUrl is not set: nothing to compare with the URL registered at the service (integrations are then given ` +
          `http://${formatAddress(webhooks.listen)}${webhooks.path}); set it to the https URL the service delivers to`,
      );
    }
    const url = new URL(webhooks.publicUrl);
    // As every printout shows a URL: its password and token-like query values redacted.
    const shown = redactUrl(webhooks.publicUrl, []);
    if (url.protocol !== 'https:' && !LOOPBACK.test(url.hostname)) {
      return warn(
        `webhooks.publicUrl ${shown} is plain http: the service delivers only to https URLs`,
        'serve the receiver behind TLS (a reverse proxy or a tunnel) and give that https URL',
        { publicUrl: shown },
      );
    }
    return skip(
      `cannot compare ${shown} with the URL registered at the service: listing webhooks (GET /projects/:id/webhooks) needs an OAuth ` +
        `access token with project.webhooks.read, and the config holds a project token; compare it in the project's dashboard, or run ` +
        `with --probe`,
      { publicUrl: shown },
    );
  },
};

/** Why a delivery through the public URL did not arrive, as a fix. */
function probeFix(answer: LocalAnswer): string {
  if (answer.kind !== 'answer') return 'nothing answers at webhooks.publicUrl from here: check its DNS, the tunnel or the reverse proxy';
  if (answer.status === 401)
    return 'the receiver behind the public URL refused the signature: the URL leads to another receiver, or one with other secrets';
  if (answer.status === 404 || answer.status === 405)
    return "the public URL's path does not reach webhooks.path: fix the proxy's path mapping or webhooks.publicUrl";
  if (answer.status >= 500) return 'the proxy or tunnel cannot reach the receiver: check it forwards to webhooks.listen';
  return 'check that the reverse proxy or tunnel forwards webhooks.publicUrl to webhooks.listen unchanged (body and headers)';
}

const said = (answer: LocalAnswer) =>
  answer.kind === 'answer' ? `answered ${answer.status}` : answer.kind === 'refused' ? 'refused the connection' : answer.reason;

/** Listens on `webhooks.listen` with a real receiver for one test, sends it through `url`, and tells whether it came back. */
async function probeThroughOwnReceiver(
  deps: DoctorDeps,
  url: string,
  delivery: TestDelivery,
  signal: AbortSignal,
): Promise<{ answer: LocalAnswer; arrived: boolean }> {
  const { webhooks } = deps.config;
  const secrets = await acceptedSecrets(deps);
  let arrive: () => void = () => undefined;
  const arrived = new Promise<true>((resolve) => (arrive = () => resolve(true)));
  const onDelivery = (received: ReceivedDelivery) => {
    if (received.generation === 'v0' || received.traceId === delivery.traceId) arrive();
  };
  const receiver = createWebhookReceiver({
    listen: webhooks.listen,
    path: webhooks.path,
    secrets: secrets.v1,
    ...(secrets.legacy === undefined ? {} : { legacyAuthorization: secrets.legacy }),
    // A test delivery records no vote; a vote that came this way would be refused (503), and retried by the service.
    pipeline: { ingest: () => Promise.reject(new Error('doctor records no votes')) },
    onDelivery,
  });
  await receiver.start();
  try {
    const answer = await askLocal(url, {
      method: 'POST',
      headers: delivery.headers,
      body: delivery.body,
      timeoutMs: deps.timeoutMs,
      signal,
    });
    // The receiver hears of a delivery just after it answered it.
    const grace = new Promise<false>((resolve) => setTimeout(() => resolve(false), 500).unref());
    return { answer, arrived: answer.kind === 'answer' && (await Promise.race([arrived, grace])) };
  } finally {
    await receiver.stop({ deadline: Date.now() });
  }
}

/** `webhooks.probe` (`--probe`): a signed test sent to `webhooks.publicUrl` comes back to this receiver. */
export const webhookProbeCheck: DoctorCheck = {
  name: 'webhooks.probe',
  paths: ['webhooks.publicUrl'],
  async run(deps, signal): Promise<CheckOutcome> {
    const { webhooks } = deps.config;
    if (!webhooks.enabled) return skip(WEBHOOKS_OFF);
    if (!deps.probe)
      return skip('not asked: run with --probe to send a signed test delivery to webhooks.publicUrl and see it reach this receiver');
    if (webhooks.publicUrl === undefined) return skip('webhooks.publicUrl is not set: there is no public URL to send the test to');
    const shown = redactUrl(webhooks.publicUrl, []);
    const delivery = testDelivery(await acceptedSecrets(deps), deps.now());
    if (delivery === undefined) return skip('no webhook secret to sign a test with (see webhooks.secret)');
    const port = await receiverPort(deps);
    if (port.kind === 'ours') {
      const answer = await askLocal(webhooks.publicUrl, {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body,
        timeoutMs: deps.timeoutMs,
        signal,
      });
      if (answer.kind === 'answer' && answer.status >= 200 && answer.status < 300) {
        return ok(
          `a signed ${delivery.kind} sent to ${shown} was accepted by a receiver with this config's secret ` +
            `(${answer.status} in ${answer.ms} ms)`,
          { traceId: delivery.traceId },
        );
      }
      return fail(`a signed ${delivery.kind} sent to ${shown} did not get through: it ${said(answer)}`, probeFix(answer), {
        traceId: delivery.traceId,
      });
    }
    if (port.kind !== 'free') return skip('webhooks.listen is not free and not this agent\'s receiver (see webhooks.port)');
    const { answer, arrived } = await probeThroughOwnReceiver(deps, webhooks.publicUrl, delivery, signal);
    const where = formatAddress(webhooks.listen);
    if (arrived)
      return ok(
        `a signed ${delivery.kind} sent to ${shown} came back to a receiver the doctor ran ` +
          `on ${where} (${said(answer)} in ${answer.kind === 'answer' ? answer.ms : 0} ms)`,
        { traceId: delivery.traceId },
      );
    if (answer.kind === 'answer' && answer.status >= 200 && answer.status < 300) {
      return fail(
        `a signed ${delivery.kind} sent to ${shown} was accepted ` +
          `(${answer.status}), but not by ${where}: the public URL leads somewhere else`,
        'point the reverse proxy or tunnel at webhooks.listen, or fix webhooks.publicUrl',
        { traceId: delivery.traceId },
      );
    }
    return fail(`a signed ${delivery.kind} sent to ${shown} did not come back to ${where}: it ${said(answer)}`, probeFix(answer), {
      traceId: delivery.traceId,
    });
  },
};
