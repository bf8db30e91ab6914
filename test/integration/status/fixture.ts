import { mkdtemp } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { createListingAgent, type ListingAgent } from '../../../src/agent/agent.js';
import type { AgentConfigInput } from '../../../src/agent/options.js';
import type { AgentLogger } from '../../../src/log/agent-logger.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { voteKey } from '../../../src/votes/types.js';
import { clientFor } from '../../helpers/client.js';
import { setupBot, startTestEmulator, type BotFixture, type TestEmulator } from '../../helpers/emulator.js';
import { freePort } from '../../helpers/ports.js';

/**
 * An agent with every capability on, against the emulator, for the status page's tests: stats
 * from a count the test sets, two commands, the votes cursor, a signed webhook registered at the
 * emulator (votes arrive within a second), and an http reward hook the test can make fail (with
 * an HTML error page, to see it escaped). Every secret the config can hold is set, to a value the
 * tests look for in every answer.
 */

/** Secrets planted in the config: none may ever appear in a page, a JSON or an error. */
export const PLANTED = {
  discordToken: 'planted-discord-token.MTIzNDU2.abcdef',
  legacyAuthorization: 'planted-legacy-authorization-7f3a',
  pushKey: 'planted-push-key-91c2e',
  hookSecret: 'planted-hook-secret-5d8e0',
  hookAuthorization: 'Bearer planted-hook-authorization-2b6c',
  adminToken: 'planted-admin-token-0123456789abcdef',
} as const;

/** What a failing hook answers: HTML, so the page must show it as text. */
export const HOOK_ERROR_BODY = '<script>alert("hook")</script>';

/** The name of the test's reward hook. */
export const HOOK = 'shop';

/** A reward hook the test turns on and off. */
export interface SwitchableHook {
  url: string;
  /** While true, every call is answered 500 with {@link HOOK_ERROR_BODY}. */
  failing: boolean;
  /** Vote keys answered 204. */
  rewarded: string[];
}

/** What {@link startStatusAgent} made. */
export interface StatusAgent {
  emu: TestEmulator;
  fx: BotFixture;
  agent: ListingAgent;
  /** The health server's base URL (the page is at `${url}/`). */
  url: string;
  hook: SwitchableHook;
  /** Every secret of the agent's config (and the bot's client secret and access token). */
  secrets: string[];
  /** The count the agent posts next. */
  setServers(count: number): void;
  /**
   * A user named `username` votes on the listing (delivered by webhook at once, listed by the
   * cursor later), at `createdAt` (epoch ms; default now). Resolves the vote's key.
   */
  vote(username: string, createdAt?: number): { userId: string; key: string };
  /** Running agents are stopped after each test. */
}

const servers: Server[] = [];
const agents: ListingAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.stop()));
  await Promise.all(servers.splice(0).map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
});

async function startHook(): Promise<SwitchableHook> {
  const hook: SwitchableHook = { url: '', failing: false, rewarded: [] };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (hook.failing) {
        res.writeHead(500, { 'content-type': 'text/html' }).end(HOOK_ERROR_BODY);
        return;
      }
      hook.rewarded.push(String(req.headers['idempotency-key']));
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 1_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  hook.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/reward`;
  return hook;
}

/** Starts the emulator, the hook and the agent; `adminToken: null` leaves the actions off. */
export async function startStatusAgent(
  options: { adminToken?: string | null; config?: Partial<AgentConfigInput>; logger?: AgentLogger; reminders?: boolean } = {},
): Promise<StatusAgent> {
  const emu = await startTestEmulator({ settings: { allowHttpLoopback: true } });
  const fx = setupBot(emu);
  const hook = await startHook();
  const port = await freePort();
  const owner = clientFor(emu, { accessToken: fx.accessToken, projectId: fx.projectId });
  const webhook = await owner.webhooks.create({ label: 'status page test', url: `http://127.0.0.1:${port}/webhooks/listing`, allowHttpLoopback: true });
  let count = 1_195;
  const adminToken = options.adminToken === undefined ? PLANTED.adminToken : options.adminToken;
  const agent = createListingAgent({
    config: {
      service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
      discord: { token: PLANTED.discordToken },
      state: { directory: await mkdtemp(join(tmpdir(), 'la-status-')) },
      health: { listen: '127.0.0.1:0', ...(adminToken === null ? {} : { adminToken }) },
      stats: { enabled: true, push: { key: PLANTED.pushKey } },
      commands: { enabled: true },
      votes: {
        enabled: true,
        pollInterval: '5s',
        hooks: [{ url: hook.url, name: HOOK, retries: 0, timeout: '2s', secret: PLANTED.hookSecret, authorization: PLANTED.hookAuthorization }],
        // With `reminders`: each reminder to the same hook (its idempotency key `reminder:<vote key>`).
        ...(options.reminders ? { reminders: { enabled: true, hooks: [{ url: hook.url, name: 'dm', retries: 0 }] } } : {}),
      },
      webhooks: { enabled: true, listen: `127.0.0.1:${port}`, secrets: [webhook.secret], legacyAuthorization: PLANTED.legacyAuthorization },
      ...options.config,
    },
    store: createMemoryStore(),
    countSource: { description: 'the test bot', read: async () => ({ ready: true, serverCount: count, shardCount: 2 }) },
    commands: [
      { name: 'ping', description: 'Check that the bot is alive' },
      { name: 'vote', description: 'Get the link to vote' },
    ],
    reconnectDelaysMs: [60_000],
    ...(options.logger ? { logger: options.logger } : {}),
  });
  agents.push(agent);
  agent.on('error', () => undefined);
  // The tests start from a known state: the first post and the first command sync done.
  const settled = Promise.all([new Promise((resolve) => agent.once('posted', resolve)), new Promise((resolve) => agent.once('commandsSynced', resolve))]);
  await agent.start();
  await settled;
  return {
    emu,
    fx,
    agent,
    url: agent.healthServerUrl!,
    hook,
    secrets: [fx.projectToken, webhook.secret, fx.clientSecret, fx.accessToken, ...Object.values(PLANTED)],
    setServers: (n) => (count = n),
    vote(username, createdAt) {
      const user = emu.admin.createUser({ username });
      const vote = emu.admin.castVote({ project_id: fx.projectId, user_id: user.id, ...(createdAt === undefined ? {} : { created_at: new Date(createdAt).toISOString() }) });
      return { userId: user.id, key: voteKey(vote.user_id, vote.created_at) };
    },
  };
}

/** Polls `check` every 50 ms until it returns a value that is not undefined, or fails after `timeoutMs`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
