/**
 * What confirmed writes cost (issue 35, item 2): a vote's record in the Redis vote ledger, one
 * `recordPending` per vote as the webhook receiver makes it, sent in an OPEN loop at 1,000 votes/s
 * (each call leaves at its slot on the clock, answered or not), against a primary with one replica
 * on 127.0.0.1 (`appendonly yes`, `appendfsync always`, as test/helpers/redis.ts starts them):
 *
 * - `replicas 0`: the record alone, as before `WAIT` (what a failover could take back);
 * - `replicas 1` (the default with a replica): the record, then `WAIT 1` (shared by the calls that
 *   ask while one is in flight).
 *
 * Per vote: the call's start to its answer; p50, p99, p99.9; the `WAIT`s sent (INFO commandstats)
 * per vote. Run:  npx vitest bench --run bench/redis-confirm.bench.ts   (about 25 s; needs
 * redis-server; `BENCH_CONFIRM_SECONDS` sets each run's length, default 5).
 */
import { bench, describe } from 'vitest';
import { createRedisConnection } from '../src/redis/connection.js';
import { createRedisVoteLedger } from '../src/votes/ledger-redis.js';
import { startTestRedis, type TestRedis } from '../test/helpers/redis.js';
import { voteAt } from '../test/helpers/votes.js';

const RATE = 1_000;
const SECONDS = Number(process.env.BENCH_CONFIRM_SECONDS ?? 5);

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN;
}

async function waits(primary: TestRedis): Promise<number> {
  const stats = await primary.command('INFO', 'commandstats');
  return Number(/cmdstat_wait:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

async function run(primary: TestRedis, replicas: number, round: number) {
  const connection = createRedisConnection({ url: primary.url, prefix: `bench-${replicas}-${round}:`, replicas });
  connection.start();
  await connection.whenUp({ timeoutMs: 5_000 });
  const ledger = createRedisVoteLedger({ connection, agentId: 'bench', leaseMs: 15_000, keepKeysForMs: 3_600_000 });
  await ledger.open();
  const total = RATE * SECONDS;
  const latencies: number[] = [];
  const waitsBefore = await waits(primary);
  const start = performance.now();
  const calls: Promise<void>[] = [];
  for (let i = 0; i < total; i += 1) {
    const slot = start + (i * 1_000) / RATE;
    const delay = slot - performance.now();
    if (delay > 1) await new Promise((resolve) => setTimeout(resolve, delay));
    const sent = performance.now();
    calls.push(
      ledger.recordPending([voteAt(`u${round}-${i}`, Date.now() - 1_000)]).then(() => {
        latencies.push(performance.now() - sent);
      }),
    );
  }
  await Promise.all(calls);
  const sentWaits = (await waits(primary)) - waitsBefore;
  await ledger.close();
  await connection.close();
  latencies.sort((a, b) => a - b);
  return { replicas, p50: percentile(latencies, 50), p99: percentile(latencies, 99), p999: percentile(latencies, 99.9), waitsPerVote: sentWaits / total };
}

describe('confirmed writes at 1,000 votes/s', () => {
  bench(
    'recordPending, replicas 0 vs 1',
    async () => {
      const primary = await startTestRedis();
      const replica = await startTestRedis({ args: ['--replicaof', '127.0.0.1', String(primary.port)] });
      try {
        for (let i = 0; i < 50 && !(await replica.command('INFO', 'replication')).includes('master_link_status:up'); i += 1) {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        const rows = [];
        for (const [round, replicas] of [0, 1, 0, 1].entries()) rows.push(await run(primary, replicas, round));
        const ms = (value: number) => `${value.toFixed(2)} ms`;
        console.log('| replicas | p50 | p99 | p99.9 | WAITs per vote |\n| ---: | ---: | ---: | ---: | ---: |');
        for (const row of rows) {
          console.log(`| ${row.replicas} | ${ms(row.p50)} | ${ms(row.p99)} | ${ms(row.p999)} | ${row.waitsPerVote.toFixed(2)} |`);
        }
      } finally {
        await replica.close();
        await primary.close();
      }
    },
    { iterations: 1, time: 0, warmupIterations: 0, warmupTime: 0 },
  );
});
