import { parseLeaseValue } from '../../leader/lease.js';
import { RedisServerError, type RedisConnection } from '../../redis/connection.js';
import { REDIS_KEYS } from '../../redis/keys.js';
import { formatMs } from '../runner.js';
import { fail, ok, skip, warn, type CheckOutcome, type DoctorCheck, type DoctorDeps } from '../types.js';
import { errorMessage } from '../../errors.js';

const NO_REDIS = 'state.redis is not set: one agent keeps its state in the state directory and leads alone';

const REDIS_FIX =
  'start Redis, or fix state.redis.url (LISTING_AGENT_STATE_REDIS_URL), state.redis.sentinel or state.redis.cluster; ' +
  'is it reachable from this machine (firewall, TLS)?';
/** The connection, or the `fail` that says Redis cannot be reached (for every check that needs it). */
export async function redisOrOutcome(deps: DoctorDeps): Promise<RedisConnection | CheckOutcome> {
  try {
    return await deps.redis();
  } catch (error) {
    // Reached, but not a server the agent can use (a Sentinel at the URL, a replica): its own fix.
    if (error instanceof RedisServerError) return fail(error.problem, error.fix);
    return fail(errorMessage(error), REDIS_FIX);
  }
}

/** `redis_version:7.0.15` out of `INFO server`. */
export function redisVersion(info: string): string | undefined {
  return /^redis_version:(\S+)/m.exec(info)?.[1];
}

/** `redis.server`: Redis answers, and which version it runs. */
export const redisServerCheck: DoctorCheck = {
  name: 'redis.server',
  paths: ['state.redis'],
  async run(deps) {
    if (deps.config.state.redis === undefined) return skip(NO_REDIS);
    const redis = await redisOrOutcome(deps);
    if ('status' in redis) return redis;
    const started = performance.now();
    let info: string;
    try {
      info = String(await redis.client.sendCommand(['INFO', 'server']));
    } catch (error) {
      return fail(`${redis.describe()} is reached but refuses INFO: ${errorMessage(error)}`, REDIS_FIX);
    }
    const ms = performance.now() - started;
    const version = redisVersion(info);
    return ok(`${redis.describe()} answers in ${formatMs(ms)}: Redis ${version ?? '(version unknown)'}, keys under ${redis.prefix}`, {
      version: version ?? null,
      prefix: redis.prefix,
    });
  },
};

/** `redis.leader`: which agent holds the lease, and for how long yet. */
export const redisLeaderCheck: DoctorCheck = {
  name: 'redis.leader',
  paths: ['state.redis'],
  async run(deps): Promise<CheckOutcome> {
    if (deps.config.state.redis === undefined) return skip(NO_REDIS);
    const redis = await redisOrOutcome(deps);
    if ('status' in redis) return skip('needs Redis (see redis.server)');
    const key = redis.key(REDIS_KEYS.leader);
    let value: string | null;
    let ttlMs: number;
    try {
      [value, ttlMs] = await Promise.all([redis.client.get(key), redis.client.pTTL(key)]);
    } catch (error) {
      return fail(`cannot read the lease at ${key}: ${errorMessage(error)}`, REDIS_FIX);
    }
    if (value === null) {
      return warn(
        'no agent leads: none is running, or the leader stopped less than a lease ago; stats, commands and the votes cursor wait for a ' +
          'leader',
        "start an agent ('listing-agent run') with this state.redis; one takes the lease within state.redis.lease",
        { leader: null },
      );
    }
    const lease = parseLeaseValue(value);
    if (lease === undefined)
      return fail(`the lease at ${key} is not an agent's (${value.slice(0, 60)})`, `delete ${key}: the agents elect a leader again`);
    const left = ttlMs > 0 ? `, ${formatMs(ttlMs)} left on its lease` : '';
    return ok(`${lease.agentId} leads (fencing token ${lease.token}${left})`, {
      leader: lease.agentId,
      token: lease.token,
      leaseLeftMs: ttlMs > 0 ? ttlMs : null,
    });
  },
};
