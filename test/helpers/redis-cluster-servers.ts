import { startTestRedis, type TestRedis } from './redis.js';

/**
 * A Redis Cluster of three primaries on 127.0.0.1 (random ports, `redis-server --cluster-enabled
 * yes`, the append-only file on), its slots split in three by hand (CLUSTER ADDSLOTSRANGE, then
 * CLUSTER MEET): no `redis-cli` needed. With `replicaOf`, one more server replicates the primary
 * that holds that key's slot, so a test can fail it over (CLUSTER FAILOVER on the replica, or a
 * kill of the primary: `cluster-node-timeout` is 1 000 ms).
 */
export interface TestCluster {
  /** The primaries, in slot order (0-5460, 5461-10922, 10923-16383). */
  readonly primaries: readonly TestRedis[];
  /** The replica asked for (`replicaOf`), if any. */
  readonly replica: TestRedis | undefined;
  /** `127.0.0.1:<port>` of every node. */
  readonly nodes: readonly string[];
  /** The node serving `slot` as primary now (asked of the cluster itself). */
  primaryOf(slot: number): Promise<TestRedis>;
  /** Waits until every node says `cluster_state:ok`. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

const RANGES = [
  [0, 5460],
  [5461, 10922],
  [10923, 16383],
] as const;

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

const clusterArgs = ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '1000'];

/** Starts the cluster (call `close()` in afterAll). */
export async function startTestCluster(options: { replicaOf?: number } = {}): Promise<TestCluster> {
  const primaries = await Promise.all(RANGES.map(() => startTestRedis({ args: clusterArgs })));
  const replica = options.replicaOf === undefined ? undefined : await startTestRedis({ args: clusterArgs });
  const all = [...primaries, ...(replica ? [replica] : [])];
  const close = async () => {
    await Promise.all(all.map((server) => server.close()));
  };
  try {
    for (const [i, [from, to]] of RANGES.entries()) await primaries[i]!.command('CLUSTER', 'ADDSLOTSRANGE', String(from), String(to));
    for (const server of all.slice(1)) await primaries[0]!.command('CLUSTER', 'MEET', '127.0.0.1', String(server.port));
    const settled = () =>
      until('cluster_state:ok on every node', async () => {
        const infos = await Promise.all(all.map((server) => server.command('CLUSTER', 'INFO')));
        return infos.every((info) => info.includes('cluster_state:ok') && info.includes(`cluster_known_nodes:${all.length}`));
      });
    await settled();
    if (replica && options.replicaOf !== undefined) {
      const owner = primaries[RANGES.findIndex(([from, to]) => options.replicaOf! >= from && options.replicaOf! <= to)]!;
      const id = (await owner.command('CLUSTER', 'MYID')).replace(/^\$\d+\s*/, '').trim();
      await until('the replica to know its primary', async () => (await replica.command('CLUSTER', 'REPLICATE', id)).includes('OK'));
      await until('the replica in sync', async () => (await replica.command('INFO', 'replication')).includes('master_link_status:up'));
    }
    const primaryOf = async (slot: number): Promise<TestRedis> => {
      for (const server of all) {
        // This node's own line of CLUSTER NODES: `<id> <addr> myself,master - 0 0 1 connected 0-5460`.
        const nodes = await server.command('CLUSTER', 'NODES').catch(() => '');
        const mine = nodes.split('\n').find((line) => line.includes('myself'));
        if (mine === undefined || !/myself,master/.test(mine)) continue;
        const ranges = mine.trim().split(' ').slice(8);
        const serves = ranges.some((range) => {
          const [from, to = from] = range.split('-').map(Number);
          return slot >= from! && slot <= to!;
        });
        if (serves) return server;
      }
      throw new Error(`no primary serves slot ${slot}`);
    };
    return { primaries, replica, nodes: all.map((server) => `127.0.0.1:${server.port}`), primaryOf, settled, close };
  } catch (error) {
    await close();
    throw error;
  }
}
