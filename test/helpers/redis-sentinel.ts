import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@redis/client';
import { programPath } from '../setup/provided.js';
import { freePort } from './ports.js';
import { startTestRedis, type TestRedis } from './redis.js';

/**
 * Redis as production runs it, on 127.0.0.1: a primary, a replica of it (both with the
 * append-only file), and three Sentinels (Debian's `redis-sentinel`: test/setup/ finds or installs
 * it) watching them with a quorum of 2, their timeouts small so that a failover takes a few
 * seconds (`down-after-milliseconds` 1 000, `failover-timeout` 3 000).
 */
export interface TestSentinels {
  /** The name the Sentinels monitor the primary by. */
  readonly masterName: string;
  /** The two data servers; which is the primary changes with a failover. */
  readonly servers: readonly [TestRedis, TestRedis];
  /** The Sentinels' addresses, `127.0.0.1:<port>`. */
  readonly nodes: readonly string[];
  /** `redis://127.0.0.1:<port>` of the first Sentinel (for a test that points a URL at it). */
  readonly sentinelUrl: string;
  /** The port of the server the Sentinels name as the primary now. */
  primaryPort(): Promise<number>;
  /** The data server the Sentinels name as the primary now, and the other one. */
  roles(): Promise<{ primary: TestRedis; replica: TestRedis }>;
  /** Waits until the replica is in sync with the primary (after a start or a failover). */
  settled(): Promise<void>;
  /** `SENTINEL FAILOVER`, then waits until the Sentinels name the other server and it says it is the primary; its port. */
  failover(): Promise<number>;
  /** Stops the Sentinels and the servers, and removes their files. */
  close(): Promise<void>;
}

const REDIS_SENTINEL = programPath('redis-sentinel') ?? 'redis-sentinel';
const MASTER = 'agents';

/** One command to a server or Sentinel over a throwaway client. */
async function ask(port: number, args: string[]): Promise<unknown> {
  const client = createClient({ socket: { host: '127.0.0.1', port, reconnectStrategy: false } });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await client.sendCommand(args);
  } finally {
    client.destroy();
  }
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      // not answering yet
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A field of `SENTINEL MASTER <name>` (a map in RESP3, a flat list in RESP2). */
function masterField(reply: unknown, field: string): string | undefined {
  if (reply instanceof Map) return reply.get(field) === undefined ? undefined : String(reply.get(field));
  if (Array.isArray(reply)) {
    const at = reply.indexOf(field);
    return at < 0 ? undefined : String(reply[at + 1]);
  }
  return reply !== null && typeof reply === 'object' ? String((reply as Record<string, unknown>)[field]) : undefined;
}

async function startSentinel(dir: string, primaryPort: number): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const file = join(dir, `sentinel-${port}.conf`);
  const lines = [
    `port ${port}`,
    'bind 127.0.0.1',
    'protected-mode no',
    `dir ${dir}`,
    `sentinel monitor ${MASTER} 127.0.0.1 ${primaryPort} 2`,
    `sentinel down-after-milliseconds ${MASTER} 1000`,
    `sentinel failover-timeout ${MASTER} 3000`,
    `sentinel parallel-syncs ${MASTER} 1`,
  ];
  await writeFile(file, `${lines.join('\n')}\n`);
  const child = spawn(REDIS_SENTINEL, [file, '--loglevel', 'warning'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let output = '';
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await until(`redis-sentinel on ${port} (${output.slice(-300)})`, async () => (await ask(port, ['PING'])) === 'PONG', 10_000);
  return { port, child };
}

/** Starts a primary, its replica and three Sentinels; resolves once every Sentinel knows the replica and the other two. */
export async function startTestSentinels(): Promise<TestSentinels> {
  const dir = await mkdtemp(join(tmpdir(), 'la-sentinel-'));
  const first = await startTestRedis();
  const second = await startTestRedis({ args: ['--replicaof', '127.0.0.1', String(first.port)] });
  const servers = [first, second] as const;
  const sentinels = [await startSentinel(dir, first.port), await startSentinel(dir, first.port), await startSentinel(dir, first.port)];
  const primaryPort = async () => {
    const reply = (await ask(sentinels[0]!.port, ['SENTINEL', 'get-master-addr-by-name', MASTER])) as string[];
    return Number(reply[1]);
  };
  const knowsAll = async (port: number) => {
    const master = await ask(port, ['SENTINEL', 'MASTER', MASTER]);
    return masterField(master, 'num-slaves') === '1' && masterField(master, 'num-other-sentinels') === '2';
  };
  /** The replica of `primary` is in sync (its first full sync done). */
  const inSync = async (primary: TestRedis) => /slave0:.*state=online/.test(await primary.command('INFO', 'replication'));
  await until('the replica in sync', () => inSync(first));
  for (const sentinel of sentinels) await until(`Sentinel ${sentinel.port} to know the replica and the other Sentinels`, () => knowsAll(sentinel.port));
  const roles = async () => {
    const port = await primaryPort();
    const primary = servers.find((server) => server.port === port)!;
    return { primary, replica: servers.find((server) => server !== primary)! };
  };
  return {
    masterName: MASTER,
    servers,
    nodes: sentinels.map((sentinel) => `127.0.0.1:${sentinel.port}`),
    sentinelUrl: `redis://127.0.0.1:${sentinels[0]!.port}`,
    primaryPort,
    roles,
    async settled() {
      const { primary } = await roles();
      await until('the replica in sync', () => inSync(primary));
    },
    async failover() {
      const { primary, replica } = await roles();
      // A failover needs a replica in sync that the Sentinel knows as such (after an earlier
      // failover it learns of the old primary's new role at its next INFO, within 10 s).
      await until('the replica in sync', () => inSync(primary));
      await until('the Sentinel to know the replica', async () => {
        const known = (await ask(sentinels[0]!.port, ['SENTINEL', 'REPLICAS', MASTER])) as unknown[];
        return known.some((entry) => masterField(entry, 'port') === String(replica.port) && masterField(entry, 'flags') === 'slave');
      });
      // On a loaded machine a Sentinel may abort the failover it was asked for (its replica's INFO
      // came late): asked again, up to three times, as an operator would.
      for (let attempt = 1; ; attempt++) {
        await ask(sentinels[0]!.port, ['SENTINEL', 'FAILOVER', MASTER]).catch(() => undefined);
        try {
          await until('the Sentinels to name the promoted replica', async () => (await primaryPort()) === replica.port, 15_000);
          break;
        } catch (error) {
          if (attempt === 3) throw error;
        }
      }
      await until('the promoted replica to take writes', async () => ((await ask(replica.port, ['ROLE'])) as unknown[])[0] === 'master');
      return replica.port;
    },
    async close() {
      await Promise.all(
        sentinels.map(
          ({ child }) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) return resolve();
              child.once('exit', () => resolve());
              child.kill('SIGTERM');
            }),
        ),
      );
      await Promise.all(servers.map((server) => server.close()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
