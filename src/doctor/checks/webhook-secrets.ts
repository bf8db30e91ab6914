import { randomUUID } from 'node:crypto';
import { readRedisSecrets } from '../../webhooks/secrets-redis.js';
import { entryLive, readSecretFile, secretFilePath, type SecretFileContent } from '../../webhooks/secrets-file.js';
import { signDelivery } from '../../contract/signature.js';
import { doctorStateDirectory } from '../deps.js';
import type { DoctorDeps } from '../types.js';
import { errorMessage } from '../../errors.js';

/**
 * The secrets a receiver of this configuration accepts, found once per doctor run and shared by
 * the webhook checks, and a test delivery signed with one of them. No secret leaves this module
 * but in a signature: counts and places only.
 */

/** Where the accepted secrets are, by count. */
export interface AcceptedSecrets {
  /** The v1 secrets (config, then secret file, then Redis), deduplicated. */
  v1: string[];
  counts: { config: number; secretFile: number; redis: number };
  legacy: string | undefined;
  /** Places that could not be read, in words (never a secret). */
  problems: string[];
}

const liveSecrets = (content: SecretFileContent | undefined, now: number) =>
  (content?.secrets ?? []).filter((e) => entryLive(e, now)).map((e) => e.secret);
async function findSecrets(deps: DoctorDeps): Promise<AcceptedSecrets> {
  const { webhooks } = deps.config;
  const problems: string[] = [];
  const file = secretFilePath(doctorStateDirectory(deps));
  let fromFile: string[] = [];
  try {
    fromFile = liveSecrets(await readSecretFile(file), deps.now());
  } catch (error) {
    problems.push(errorMessage(error));
  }
  let fromRedis: string[] = [];
  if (deps.config.state.redis !== undefined) {
    try {
      fromRedis = liveSecrets(await readRedisSecrets(await deps.redis()), deps.now());
    } catch (error) {
      problems.push(`the secrets in Redis cannot be read: ${errorMessage(error)}`);
    }
  }
  for (const secret of [...fromFile, ...fromRedis]) deps.secrets.add(secret);
  return {
    v1: [...new Set([...webhooks.secrets, ...fromFile, ...fromRedis])],
    counts: { config: webhooks.secrets.length, secretFile: fromFile.length, redis: fromRedis.length },
    legacy: webhooks.legacyAuthorization,
    problems,
  };
}

const found = new WeakMap<DoctorDeps, Promise<AcceptedSecrets>>();

/** The accepted secrets, read once per `deps`. */
export function acceptedSecrets(deps: DoctorDeps): Promise<AcceptedSecrets> {
  let promise = found.get(deps);
  if (promise === undefined) {
    promise = findSecrets(deps);
    found.set(deps, promise);
  }
  return promise;
}

/** A made-up but well-formed project and user, as a real `webhook.test` carries. */
const EXAMPLE = {
  project: { id: '1230000000000000001', type: 'bot', platform: 'discord', platform_id: '1230000000000000002' },
  user: { id: '1230000000000000003', platform_id: '1230000000000000004', name: 'listing-agent doctor', avatar_url: null },
};

/** A test delivery: headers and body, with the trace ID the receiver logs. */
export interface TestDelivery {
  headers: Record<string, string>;
  body: string;
  traceId: string;
  /** `webhook.test` (signed, v1) or `legacy test` (v0 Authorization). */
  kind: 'webhook.test' | 'legacy test';
}

/**
 * A `webhook.test` signed with the first accepted v1 secret, as the service signs it; with only
 * the legacy secret, a v0 `test` vote. Undefined when there is no secret at all.
 */
export function testDelivery(secrets: AcceptedSecrets, nowMs: number): TestDelivery | undefined {
  const traceId = `doctor-${randomUUID()}`;
  const base = { 'content-type': 'application/json', 'user-agent': 'listing-agent doctor' };
  const [secret] = secrets.v1;
  if (secret !== undefined) {
    const body = JSON.stringify({ type: 'webhook.test', data: EXAMPLE });
    return {
      headers: { ...base, ...signDelivery({ secret, rawBody: body, timestampSeconds: Math.floor(nowMs / 1000), traceId }) },
      body,
      traceId,
      kind: 'webhook.test',
    };
  }
  if (secrets.legacy === undefined) return undefined;
  const body = JSON.stringify({
    bot: EXAMPLE.project.platform_id,
    user: EXAMPLE.user.platform_id,
    type: 'test',
    isWeekend: false,
    query: '',
  });
  return { headers: { ...base, authorization: secrets.legacy }, body, traceId, kind: 'legacy test' };
}
