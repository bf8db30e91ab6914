import type { RedisClusterType } from '@redis/client';
import { redisModule } from './client-module.js';
import { REDIS_CONNECTION_DEFAULTS, type RedisConnectionOptions, type RedisClusterNodes } from './connection-types.js';
import { redisErrorText, socketBase, tlsSocket, type Link, type LinkEvents } from './links.js';

/**
 * Redis Cluster (AWS MemoryDB, ElastiCache in cluster mode): every key of one agent group lives
 * under one hash tag, so that it lives in one slot, on one primary, and every Lua script and
 * multi-key command is legal there (as BullMQ does with `{bull}`). The link is the client's own
 * cluster support: it learns the slots from the nodes it is given, follows `MOVED` after a
 * failover or a resharding, and sends every command to the primary that holds the agent's slot.
 */

/**
 * The prefix as Redis Cluster needs it: `listing-agent:` becomes `{listing-agent}:` (the tag is
 * the prefix without its trailing `:`), so every key `{listing-agent}:...` hashes to one slot. A
 * prefix that has a hash tag already (`{bot}:`, `app:{bot}:`) is kept as it is.
 */
export function clusterPrefix(prefix: string): string {
  if (/\{[^}]+\}/.test(prefix)) return prefix;
  const tail = prefix.endsWith(':') ? ':' : '';
  return `{${prefix.slice(0, prefix.length - tail.length)}}${tail}`;
}

/** CRC16/XMODEM, the checksum Redis Cluster hashes keys with. */
function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** The slot of `key` (0..16383), its hash tag alone when it has one, as Redis Cluster computes it. */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  const hashed = close > open + 1 ? key.slice(open + 1, close) : key;
  return crc16(Buffer.from(hashed)) % 16_384;
}

/** The cluster's nodes, as their shard map names them: `host:port` of the primary holding `slot`. */
function slotPrimary(cluster: RedisClusterType, slot: number): string | undefined {
  const shard = (cluster.slots as ReadonlyArray<{ master?: { host: string; port: number } } | undefined>)[slot];
  return shard?.master === undefined ? undefined : `${shard.master.host}:${shard.master.port}`;
}

/**
 * The cluster of `options.cluster`: its primaries only (never a replica: the agent reads what it
 * wrote), no offline queue, credentials and TLS for every node it learns of. `routeKey` is the
 * prefix: every command the connection sends goes to the primary of its slot.
 */
export function clusterLink(options: RedisConnectionOptions & { cluster: RedisClusterNodes }, routeKey: string, events: LinkEvents): Link {
  const tls = tlsSocket(options.tls, options.tls?.enabled ?? false, 'state.redis.tls.caFile');
  const auth = {
    ...(options.username !== undefined ? { username: options.username } : {}),
    ...(options.password !== undefined ? { password: options.password } : {}),
  };
  const cluster = redisModule().createCluster({
    rootNodes: options.cluster.nodes.map((node) => ({ socket: { host: node.host, port: node.port, ...tls } })),
    defaults: {
      name: options.clientName ?? REDIS_CONNECTION_DEFAULTS.clientName,
      disableOfflineQueue: true,
      ...auth,
      socket: { ...socketBase(options), ...tls },
    },
    commandOptions: { timeout: options.commandTimeoutMs ?? REDIS_CONNECTION_DEFAULTS.commandTimeoutMs },
    useReplicas: false,
  }) as unknown as RedisClusterType;
  const slot = keySlot(routeKey);
  const primary = () => slotPrimary(cluster, slot);
  const ours = (node: { host?: string; port?: number } | undefined) => node !== undefined && `${node.host}:${node.port}` === primary();
  cluster.on('connect', () => events.ready());
  // A node that comes (back) up may be the slot's new primary: the connection checks again.
  cluster.on('node-ready', () => {
    if (cluster.isReady) events.ready();
  });
  cluster.on('node-error', (error: unknown, node?: { host?: string; port?: number }) => {
    if (ours(node)) events.lost(`the primary ${primary() ?? '?'} of the agent's slot does not answer: ${redisErrorText(error)}`);
  });
  cluster.on('disconnect', () => events.lost('connection closed'));
  cluster.on('error', (error: unknown) => events.note(`asking the cluster: ${redisErrorText(error)}`));
  return {
    kind: 'cluster',
    target: cluster,
    connect() {
      if (cluster.isOpen) return;
      cluster.connect().catch((error: unknown) => events.gaveUp(`asking the cluster nodes: ${redisErrorText(error)}`));
    },
    reconnect() {
      // A keyed command makes the client learn the slots again when they moved (MOVED); then the
      // connection checks the server the slot is on now.
      cluster
        .sendCommand(routeKey, false, ['EXISTS', routeKey])
        .catch(() => undefined)
        .finally(() => events.ready());
    },
    async close() {
      if (!cluster.isOpen) return;
      try {
        await cluster.close();
      } catch {
        cluster.destroy();
      }
    },
    canSend: () => cluster.isReady && primary() !== undefined,
    address: primary,
  };
}
