import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRedisConnection, type RedisConnection } from '../../src/redis/connection.js';
import { programPath } from '../setup/provided.js';
import { freePort } from './ports.js';

/**
 * A real `redis-server` (Debian's package: test/setup/ finds it, or installs it as root) on a free
 * port of 127.0.0.1, with its data in a temp directory and the append-only file on, so a stop and
 * a restart on the same port keep the data, as a production Redis would.
 */
export interface TestRedis {
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  /** The server's PID (changes on restart). */
  readonly pid: number;
  /** Stops the server gracefully (SIGTERM, the AOF flushed); `start()` brings it back. */
  stop(): Promise<void>;
  /** Kills the server (SIGKILL): what was not yet fsynced may be lost, like a machine dying. */
  kill(): Promise<void>;
  /** Starts it again on the same port and directory. */
  start(): Promise<void>;
  /** Runs `redis-cli`-like commands through a throwaway TCP connection (FLUSHALL between tests). */
  command(...args: string[]): Promise<string>;
  /** Stops it and removes its directory. */
  close(): Promise<void>;
}

/** The one the global setup found or installed (test/setup/); the files that get none skip. */
const REDIS_SERVER = programPath('redis-server') ?? 'redis-server';

/** One RESP command over a fresh socket; the reply as text (good enough for tests). */
function rawCommand(port: number, args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    socket.setEncoding('utf8');
    socket.once('error', reject);
    socket.on('data', (chunk: string) => {
      reply += chunk;
      if (reply.endsWith('\r\n')) {
        socket.end();
        resolve(reply.trim());
      }
    });
    socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`);
  });
}

async function waitUntilAnswering(port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}): ${output().slice(-500)}`);
    try {
      if ((await rawCommand(port, ['PING'])).includes('PONG')) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`redis-server did not answer on ${port} within 10 s: ${output().slice(-500)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Starts a redis-server for a test file (call `close()` in afterAll). `args` are added to its
 * command line (`--replicaof 127.0.0.1 <port>` for a replica).
 */
export async function startTestRedis(options: { args?: readonly string[] } = {}): Promise<TestRedis> {
  const dir = await mkdtemp(join(tmpdir(), 'la-redis-'));
  let port = await freePort();
  let child: ChildProcess | undefined;
  let output = '';

  async function launch(): Promise<void> {
    output = '';
    const spawned = spawn(
      REDIS_SERVER,
      ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--protected-mode', 'no', '--loglevel', 'warning', ...(options.args ?? [])],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const failedToSpawn = new Promise<never>((_, reject) =>
      spawned.once('error', (error: NodeJS.ErrnoException) =>
        reject(new Error(error.code === 'ENOENT' ? 'redis-server is not installed: sudo apt-get install redis-server, or REDIS_SERVER=/path/to/redis-server (npm test installs it as root)' : error.message)),
      ),
    );
    spawned.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    spawned.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child = spawned;
    await Promise.race([waitUntilAnswering(port, spawned, () => output), failedToSpawn]);
  }

  async function end(signal: NodeJS.Signals): Promise<void> {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    running.kill(signal);
    await exited;
  }

  // A port taken between freePort() and the server's bind: try a few others.
  for (let attempt = 0; ; attempt += 1) {
    try {
      await launch();
      break;
    } catch (error) {
      if (attempt >= 4 || !/Address already in use/i.test(output)) throw error;
      port = await freePort();
    }
  }

  return {
    get url() {
      return `redis://127.0.0.1:${port}`;
    },
    port,
    get pid() {
      return child?.pid ?? -1;
    },
    stop: () => end('SIGTERM'),
    kill: () => end('SIGKILL'),
    start: launch,
    command: (...args) => rawCommand(port, args),
    async close() {
      await end('SIGTERM');
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A started connection to `redis` under `prefix`, reconnecting fast (50 ms), once it is up. */
export async function connectTestRedis(redis: TestRedis, prefix: string): Promise<RedisConnection> {
  const connection = createRedisConnection({ url: redis.url, prefix, reconnectDelaysMs: [50] });
  connection.start();
  await connection.whenUp({ timeoutMs: 5_000 });
  return connection;
}

/**
 * Stops a test server's process (SIGSTOP: a frozen machine, or a partition its TCP connections
 * survive) and lets it go on (SIGCONT); `thaw()` does nothing unless it is frozen, so an `afterEach`
 * may call it. `server` is read at each call: the server may be started after this is made.
 */
export function freezer(server: () => TestRedis): { freeze(): void; thaw(): void } {
  let frozen = false;
  return {
    freeze() {
      process.kill(server().pid, 'SIGSTOP');
      frozen = true;
    },
    thaw() {
      if (frozen) process.kill(server().pid, 'SIGCONT');
      frozen = false;
    },
  };
}
