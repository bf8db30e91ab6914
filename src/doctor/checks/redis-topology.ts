import type { RedisConnection } from '../../redis/connection.js';
import { infoField } from '../../redis/server.js';
import { fail, ok, skip, warn, type CheckOutcome, type DoctorCheck, type DoctorDeps } from '../types.js';
import { redisOrOutcome } from './redis.js';
import { errorMessage } from '../../errors.js';

/*
 * What the primary is set up to keep (`redis.role`, `redis.appendonly`, `redis.replication`): its
 * replicas, the append-only file, and whether it takes a write no replica has. Read from
 * `INFO replication`, `INFO persistence` and `CONFIG GET` (which a managed Redis may refuse).
 * Each outcome is a plain function of those facts.
 */

/** The most a replica may lag for the primary to take writes (`min-replicas-max-lag`) that the docs call small. */
const MAX_LAG_ADVISED_S = 10;

/** One replica as the primary lists it (`slave0:ip=...,port=...,state=online,offset=...,lag=0`). */
export interface ReplicaFact {
  address: string;
  state: string;
  lagS: number | undefined;
}

/** What the checks read from the primary. */
export interface TopologyFacts {
  role: string;
  address: string;
  replicas: ReplicaFact[];
  /** `aof_enabled` of `INFO persistence`. */
  appendonly: boolean;
  /** `min-replicas-to-write` and `min-replicas-max-lag`, or undefined when CONFIG was refused. */
  minReplicas: { toWrite: number; maxLagS: number } | undefined;
  /** Why CONFIG could not be read. */
  configRefused?: string;
}

/** The replicas `INFO replication` lists. */
export function replicasOf(info: string): ReplicaFact[] {
  const count = Number(infoField(info, 'connected_slaves') ?? 0);
  const replicas: ReplicaFact[] = [];
  for (let i = 0; i < count; i += 1) {
    const line = infoField(info, `slave${i}`);
    if (line === undefined) continue;
    const fields = new Map(line.split(',').map((pair) => pair.split('=') as [string, string]));
    const lag = fields.get('lag');
    const address = `${fields.get('ip') ?? '?'}:${fields.get('port') ?? '?'}`;
    replicas.push({ address, state: fields.get('state') ?? '?', lagS: lag === undefined ? undefined : Number(lag) });
  }
  return replicas;
}

/** `CONFIG GET name` as a number (RESP3 answers a map, RESP2 a flat list). */
function configNumber(reply: unknown, name: string): number {
  if (reply instanceof Map) return Number(reply.get(name));
  if (Array.isArray(reply)) return Number(reply[reply.indexOf(name) + 1]);
  if (reply !== null && typeof reply === 'object') return Number((reply as Record<string, unknown>)[name]);
  return Number.NaN;
}

/** Reads the facts from the primary `redis` is connected to. */
async function readTopology(redis: RedisConnection): Promise<TopologyFacts> {
  const info = (section: string) => redis.client.sendCommand(['INFO', section]);
  const [replication, persistence] = await Promise.all([info('replication'), info('persistence')]);
  const text = String(replication);
  const facts: TopologyFacts = {
    role: infoField(text, 'role') ?? '?',
    address: redis.server?.address ?? '?',
    replicas: replicasOf(text),
    appendonly: infoField(String(persistence), 'aof_enabled') === '1',
    minReplicas: undefined,
  };
  try {
    const [toWrite, maxLag] = await Promise.all([
      redis.client.sendCommand(['CONFIG', 'GET', 'min-replicas-to-write']),
      redis.client.sendCommand(['CONFIG', 'GET', 'min-replicas-max-lag']),
    ]);
    facts.minReplicas = { toWrite: configNumber(toWrite, 'min-replicas-to-write'), maxLagS: configNumber(maxLag, 'min-replicas-max-lag') };
  } catch (error) {
    facts.configRefused = errorMessage(error);
  }
  return facts;
}

function replicaList(replicas: readonly ReplicaFact[]): string {
  return replicas.map((r) => `${r.address} ${r.state}${r.lagS === undefined ? '' : `, lag ${r.lagS} s`}`).join('; ');
}

/** `redis.role`: a primary, with its replicas; `followed` when a failover is expected (Sentinels, a cluster). */
export function roleOutcome(facts: TopologyFacts, followed: boolean): CheckOutcome {
  const details = { role: 'primary', address: facts.address, replicas: facts.replicas.map((r) => r.address) };
  const { replicas } = facts;
  if (replicas.length === 0) {
    if (followed) {
      const summary = `primary ${facts.address} has no replica: there is nothing to promote if it fails`;
      return warn(summary, 'start a replica of it (replicaof <primary host> <port>)', details);
    }
    return ok(`primary ${facts.address}, a single server: no replica to fail over to`, details);
  }
  const behind = replicas.filter((r) => r.state !== 'online');
  const summary = `primary ${facts.address} with ${replicas.length} replica${replicas.length === 1 ? '' : 's'} (${replicaList(replicas)})`;
  if (behind.length === replicas.length) {
    return warn(`${summary}: none is in sync yet`, 'wait for the replica to finish its sync; if it does not, read its log', details);
  }
  return ok(summary, details);
}

/** `redis.appendonly`: whether Redis keeps what it acknowledged across a restart. */
export function appendonlyOutcome(facts: TopologyFacts): CheckOutcome {
  if (facts.appendonly) return ok('appendonly yes: a restart of Redis keeps what it acknowledged', { appendonly: true });
  return warn(
    'appendonly no: a restart of Redis loses every write since its last snapshot, acknowledged votes among them',
    'set appendonly yes in redis.conf (CONFIG SET appendonly yes turns it on now), on the primary and every replica',
    { appendonly: false },
  );
}

/** `redis.replication`: whether the primary takes a write that no replica has (a failover could take it back). */
export function replicationOutcome(facts: TopologyFacts): CheckOutcome {
  const advised =
    `set min-replicas-to-write 1 and min-replicas-max-lag ${MAX_LAG_ADVISED_S} (or less) in redis.conf (CONFIG SET applies them now)`;
  if (facts.minReplicas === undefined) {
    const refused = `CONFIG GET refused: ${facts.configRefused ?? 'no answer'}, as a managed Redis does`;
    return skip(`cannot read min-replicas-to-write (${refused}): ask your provider how it confirms writes`);
  }
  const { toWrite, maxLagS } = facts.minReplicas;
  const details = { minReplicasToWrite: toWrite, minReplicasMaxLag: maxLagS };
  const inSync = facts.replicas.filter((r) => r.state === 'online' && (r.lagS === undefined || r.lagS <= maxLagS)).length;
  if (toWrite > 0 && inSync < toWrite) {
    return fail(
      `min-replicas-to-write ${toWrite}, but ${inSync} replica${inSync === 1 ? '' : 's'} in sync: Redis refuses every write (NOREPLICAS)`,
      'bring the replica back in sync, or set min-replicas-to-write 0 while there is none (CONFIG SET min-replicas-to-write 0)',
      details,
    );
  }
  if (facts.replicas.length === 0) return skip('no replica (see redis.role): nothing to confirm a write', details);
  if (toWrite === 0) {
    const summary =
      'min-replicas-to-write 0: the primary takes writes no replica has yet, ' +
      'and a failover can take them back (acknowledged votes among them)';
    return warn(summary, advised, details);
  }
  if (maxLagS > MAX_LAG_ADVISED_S) {
    return warn(`min-replicas-max-lag ${maxLagS} s: a failover can take back up to ${maxLagS} s of writes`, advised, details);
  }
  const taken = `a write is taken only while a replica is at most ${maxLagS} s behind`;
  return ok(`min-replicas-to-write ${toWrite}, min-replicas-max-lag ${maxLagS} s: ${taken}`, details);
}

/** A check that reads the topology of the primary and words one of its facts. */
function topologyCheck(name: string, outcome: (facts: TopologyFacts, deps: DoctorDeps) => CheckOutcome): DoctorCheck {
  return {
    name,
    paths: ['state.redis'],
    async run(deps) {
      if (deps.config.state.redis === undefined) return skip('state.redis is not set: the state is in the state directory');
      const redis = await redisOrOutcome(deps);
      if ('status' in redis) return skip('needs the Redis primary (see redis.server)');
      let facts: TopologyFacts;
      try {
        facts = await readTopology(redis);
      } catch (error) {
        const detail = errorMessage(error);
        return fail(`cannot read INFO replication: ${detail}`, 'is this Redis 6.2 or newer?');
      }
      return outcome(facts, deps);
    },
  };
}

export const redisRoleCheck = topologyCheck('redis.role', (facts, deps) =>
  roleOutcome(facts, deps.config.state.redis?.sentinel !== undefined || deps.config.state.redis?.cluster !== undefined));
export const redisAppendonlyCheck = topologyCheck('redis.appendonly', appendonlyOutcome);
export const redisReplicationCheck = topologyCheck('redis.replication', replicationOutcome);
