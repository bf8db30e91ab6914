import { formatAddress } from '../../http/listen-error.js';
import { createConfiguredSource } from '../../stats/configured-source.js';
import type { CountReading, CountSource } from '../../stats/source.js';
import { fail, ok, skip, warn, type CheckOutcome, type DoctorCheck, type DoctorDeps } from '../types.js';
import { askLocal, localUrl } from './local-http.js';
import { redisOrOutcome } from './redis.js';

const EMBEDDED =
  "stats.source is embedded: the counts come from the bot's Client (discord.js, Eris or Oceanic.js), ShardingManager or ClusterManager " +
    "inside the bot's process, so only an agent embedded in the bot can read them; 'listing-agent run' cannot (a daemon needs " +
    "discord-rest, push or redis)";

const counts = (r: Extract<CountReading, { ready: true }>) => `${r.serverCount} servers, ${r.shardCount} shards`;

/** Reads `source` once: ok with the counts, or `notReady` with the source's reason. */
async function readOnce(source: CountSource, signal: AbortSignal, notReady: (reason: string) => CheckOutcome): Promise<CheckOutcome> {
  const reading = await source.read(signal);
  if (!reading.ready) return notReady(reading.reason);
  return ok(`${source.description}: ${counts(reading)}`, { serverCount: reading.serverCount, shardCount: reading.shardCount });
}

/** The push endpoint: a running agent answers `GET {path}` with the key with its reading. */
async function checkPush(deps: DoctorDeps, signal: AbortSignal): Promise<CheckOutcome> {
  const { push } = deps.config.stats;
  const url = localUrl(push.listen, push.path);
  const answer = await askLocal(url, { headers: { authorization: `Bearer ${push.key ?? ''}` }, timeoutMs: deps.timeoutMs, signal });
  if (answer.kind === 'refused') {
    return warn(
      `nothing listens at ${url}: the push endpoint is the running agent's, and the bot's reports go nowhere until it runs`,
      "start the agent ('listing-agent run'), or check stats.push.listen (LISTING_AGENT_STATS_PUSH_LISTEN) is where it listens",
    );
  }
  if (answer.kind === 'error')
    return fail(
      `the push endpoint at ${url} did not answer: ${answer.reason}`,
      'check the agent that listens there (its log), or restart it',
    );
  if (answer.status === 401) {
    return fail(
      `the push endpoint at ${url} refused this config's stats.push.key`,
      'the running agent has another stats.push.key: restart it with this configuration, or give both the same key',
    );
  }
  const body = answer.body as
    Partial<{ ready: boolean; serverCount: number; shardCount: number; reason: string; reports: unknown[] }> | undefined;
  if (answer.status !== 200 || typeof body !== 'object' || body === null || typeof body.ready !== 'boolean') {
    return fail(
      `something that is not the push endpoint answers at ${url} (${answer.status})`,
      `stop the other program on ${formatAddress(push.listen)}, or set stats.push.listen (LISTING_AGENT_STATS_PUSH_LISTEN) to a free port`,
    );
  }
  const reports = Array.isArray(body.reports) ? body.reports.length : 0;
  if (!body.ready) {
    return warn(
      `the push endpoint answers at ${url}, but the counts are not ready: ${body.reason ?? 'no reason given'}`,
      `the bot must POST each shard's counts to ${url} with the key (pushShardCounts)`,
      { reports },
    );
  }
  return ok(
    `push endpoint ` +
      `${url}: ${body.serverCount} servers, ${body.shardCount} shards (${reports} shard ${reports === 1 ? 'report' : 'reports'})`,
    {
      serverCount: body.serverCount,
      shardCount: body.shardCount,
      reports,
    },
  );
}

/** `stats.source`: the counts source answers, with the counts it sees. */
export const statsCheck: DoctorCheck = {
  name: 'stats.source',
  paths: ['stats', 'discord.token'],
  async run(deps, signal) {
    const { stats } = deps.config;
    if (!stats.enabled) return skip('stats.enabled is false: no counts are posted');
    if (deps.countSource)
      return readOnce(deps.countSource, signal, (reason) =>
        warn(`the counts are not ready: ${reason}`, 'see the reason; the agent posts once they are'),
      );
    switch (stats.source) {
      case 'embedded':
        return skip(EMBEDDED);
      case 'push':
        return checkPush(deps, signal);
      case 'discord-rest':
        return readOnce(createConfiguredSource(deps.config), signal, (reason) =>
          fail(
            `Discord REST cannot give the counts: ${reason}`,
            'fix what the reason names (discord.token, discord.apiBaseUrl, stats.rest.shardCount)',
          ),
        );
      case 'redis': {
        const redis = await redisOrOutcome(deps);
        if ('status' in redis) return redis;
        const source = createConfiguredSource(deps.config, { redis });
        return readOnce(source, signal, (reason) =>
          warn(
            `the shard reports in Redis are not complete: ${reason}`,
            'every bot process must report its shards (createListingAgent with state.redis, or createShardReporter); see the reason for ' +
              'which are missing',
          ),
        );
      }
    }
  },
};
