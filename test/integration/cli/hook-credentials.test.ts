import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { StatusDocument } from '../../../src/status/document.js';
import { createFileVoteLedger } from '../../../src/votes/ledger-file.js';
import { voteKey, type Vote } from '../../../src/votes/types.js';
import { escapeHtml } from '../../../src/status/html.js';
import { spawnCli } from '../../helpers/cli.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { call } from '../../helpers/http.js';
import { freePort } from '../../helpers/ports.js';

/*
 * Issue 34, item 1, as the issue found it: an http reward hook whose server answers 500 with a
 * body repeating the hook's credentials (the `authorization` value without its `Bearer ` word,
 * Basic's decoded password, the URL's `?token=`), and every other credential the config holds.
 * The daemon runs as a child process; every output is searched for every planted form.
 */

const BEARER = 'pl4nted-bearer-7f3a9c1e5b';
const BASIC_USER = 'hookuser';
const BASIC_PASSWORD = 'pl4nted-basic-pw-2d8e';
const BASIC = Buffer.from(`${BASIC_USER}:${BASIC_PASSWORD}`).toString('base64');
const URL_PASSWORD = 'pl4nted-url-pw-61c0';
const URL_TOKEN = 'pl4nted-query-tok-93bd';
const HOOK_SECRET = 'pl4nted-hook-secret-0e7f';
const WEBHOOK_SECRET = 'whs_pl4nted_webhook_secret_4a1c';
const ADMIN_TOKEN = 'pl4nted-admin-token-8b2d5f0a';
const PUSH_KEY = 'pl4nted-push-key-5c9e1b7d';
const PUBLIC_PASSWORD = 'pl4nted-public-pw-3f6a';
const PUBLIC_TOKEN = 'pl4nted-public-tok-7d2c';

const servers: { close(): void }[] = [];
afterEach(() => servers.splice(0).forEach((server) => server.close()));

/** A reward hook that answers 500, its body repeating what `echo` makes of the request (what a careless server does). */
async function echoingHook(echo: (req: IncomingMessage) => string): Promise<string> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => res.writeHead(500, { 'content-type': 'text/plain' }).end(echo(req)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Every form a secret could show in: as it is, JSON-escaped, HTML-escaped, URL-encoded. */
function forms(secret: string): string[] {
  return [...new Set([secret, JSON.stringify(secret).slice(1, -1), escapeHtml(secret), encodeURIComponent(secret)])];
}

/** The places (by name) where a planted secret (by name, never its value) showed. */
function leaks(outputs: Record<string, string>, secrets: Record<string, string>): string[] {
  const found: string[] = [];
  for (const [place, text] of Object.entries(outputs)) {
    for (const [name, secret] of Object.entries(secrets)) {
      if (forms(secret).some((form) => text.includes(form))) found.push(`${name} in ${place}`);
    }
  }
  return found;
}

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function filesUnder(directory: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(directory, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out[`file ${path.slice(directory.length + 1)}`] = await readFile(path, 'utf8');
  }
  return out;
}

describe('a hook credential never reaches an output (issue 34, item 1)', () => {
  it('redacts every credential form of the config from logs, the journal, votes failed, /status.json, the page and /metrics', { timeout: 90_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    emu.admin.castVote({ project_id: fx.projectId, user_id: emu.admin.createUser({ username: 'voter' }).id });
    const secrets: Record<string, string> = {
      'the project token': fx.projectToken,
      'the Bearer authorization': `Bearer ${BEARER}`,
      'the authorization without its scheme': BEARER,
      'the Basic authorization': `Basic ${BASIC}`,
      "Basic's base64": BASIC,
      "Basic's user:password": `${BASIC_USER}:${BASIC_PASSWORD}`,
      "Basic's password": BASIC_PASSWORD,
      "the hook URL's password": URL_PASSWORD,
      "the hook URL's token": URL_TOKEN,
      'the hook secret': HOOK_SECRET,
      'the webhook secret': WEBHOOK_SECRET,
      'the admin token': ADMIN_TOKEN,
      'the push key': PUSH_KEY,
      "the public URL's password": PUBLIC_PASSWORD,
      "the public URL's token": PUBLIC_TOKEN,
    };
    // Each answer repeats what its request carried, and more: the excerpt of an answer is 200 characters.
    const bearerHook = await echoingHook((req) => `bad token ${String(req.headers.authorization).replace(/^Bearer /, '')} for ${req.url}`);
    const basicHook = await echoingHook((req) => {
      const [, encoded = ''] = String(req.headers.authorization).split(' ');
      const decoded = Buffer.from(encoded, 'base64').toString('utf8');
      return `refused ${encoded} = ${decoded}; password ${decoded.split(':')[1]}`;
    });
    const otherHook = await echoingHook(() => `known: ${fx.projectToken} ${HOOK_SECRET} ${WEBHOOK_SECRET}`);
    const moreHook = await echoingHook(() => `also: ${ADMIN_TOKEN} ${PUSH_KEY} ${PUBLIC_PASSWORD} ${PUBLIC_TOKEN}`);
    const dir = await mkdtemp(join(tmpdir(), 'la-hook-credentials-'));
    const healthPort = await freePort();
    const config = {
      service: { token: '${PROJECT_TOKEN}', v1: emu.urls.v1, v0: emu.urls.v0 },
      health: { listen: `127.0.0.1:${healthPort}`, adminToken: ADMIN_TOKEN },
      state: { directory: './state' },
      log: { format: 'json', level: 'debug' },
      stats: { enabled: true, source: 'push', push: { listen: '127.0.0.1:0', key: PUSH_KEY } },
      webhooks: {
        enabled: true,
        listen: '127.0.0.1:0',
        secrets: [WEBHOOK_SECRET],
        publicUrl: `https://agent:${PUBLIC_PASSWORD}@hooks.example.com/webhooks/listing?token=${PUBLIC_TOKEN}`,
      },
      votes: {
        enabled: true,
        pollInterval: '5s',
        lookback: '1h',
        hooks: [
          { name: 'bearer', url: `${bearerHook.replace('//', `//user:${URL_PASSWORD}@`)}/reward?token=${URL_TOKEN}`, authorization: `Bearer ${BEARER}`, secret: HOOK_SECRET, retries: 0 },
          { name: 'basic', url: `${basicHook}/reward`, authorization: `Basic ${BASIC}`, retries: 0 },
          { name: 'other', url: `${otherHook}/reward`, retries: 0 },
          { name: 'more', url: `${moreHook}/reward`, retries: 0 },
          // An exec hook that prints them on stderr: its failure quotes the last lines.
          { name: 'script', command: [process.execPath, '-e', `console.error(${JSON.stringify(`${BEARER} ${BASIC_PASSWORD} ${fx.projectToken}`)}); process.exit(3)`], retries: 0 },
        ],
      },
    };
    await writeFile(join(dir, 'agent.json'), JSON.stringify(config));
    const env = { PROJECT_TOKEN: fx.projectToken };
    const daemon = spawnCli(['run', '--config', 'agent.json'], { cwd: dir, env });
    await daemon.lineContaining('agent ready');
    const base = `http://127.0.0.1:${healthPort}`;
    const status = async () => (await call<StatusDocument>(`${base}/status.json`)).body;
    const document = await until('five dead letters', async () => {
      const doc = await status();
      return doc.votes.deadLetterCount === 5 ? doc : undefined;
    });
    // The reproduction: the hook's answer is in the dead letter, its credentials are not.
    expect(document.votes.deadLetters.find((l) => l.hook === 'bearer')?.error).toContain('answered 500 Internal Server Error: bad token [redacted] for /reward?token=[redacted]');

    const outputs: Record<string, string> = {
      '/status.json': (await call(`${base}/status.json`)).text,
      'the status page': (await call(`${base}/`)).text,
      '/metrics': (await call(`${base}/metrics`)).text,
      '/readyz': (await call(`${base}/readyz`)).text,
    };
    for (const args of [['votes', 'failed'], ['votes', 'failed', '--json']]) {
      const cli = spawnCli([...args, '--config', 'agent.json'], { cwd: dir, env });
      expect(await cli.exit(), args.join(' ')).toBe(0);
      outputs[`listing-agent ${args.join(' ')}`] = cli.stdout() + cli.stderr();
    }
    expect(outputs['listing-agent votes failed']).toContain('5 dead letters');
    daemon.child.kill('SIGTERM');
    expect(await daemon.exit()).toBe(0);
    outputs['the daemon stdout'] = daemon.stdout();
    outputs['the daemon stderr'] = daemon.stderr();
    expect(outputs['the daemon stdout']).toContain('vote hook gave up');
    Object.assign(outputs, await filesUnder(join(dir, 'state')));
    expect(Object.keys(outputs)).toContain('file votes.journal');
    expect(leaks(outputs, secrets)).toEqual([]);
  });

  it('votes failed scrubs the dead letters an earlier version stored with a credential in their error', { timeout: 30_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'la-hook-credentials-old-'));
    const config = {
      service: { token: 'a.b.c' },
      state: { directory: './state' },
      votes: { hooks: [{ name: 'reward', url: `http://127.0.0.1:1/reward?token=${URL_TOKEN}`, authorization: `Bearer ${BEARER}` }] },
    };
    await writeFile(join(dir, 'agent.json'), JSON.stringify(config));
    const createdAt = Date.now() - 60_000;
    const vote: Vote = {
      key: voteKey('111', createdAt),
      userId: '111',
      platformId: null,
      projectId: '1',
      weight: 1,
      createdAt: new Date(createdAt).toISOString(),
      expiresAt: new Date(createdAt + 43_200_000).toISOString(),
      road: 'poll',
    };
    const ledger = createFileVoteLedger({ directory: join(dir, 'state') });
    await ledger.open();
    await ledger.recordPending([vote]);
    // What 0.1.0 stored: the answer's echo of the scheme-less token and the query token, unscrubbed.
    const error = `hook "reward": POST http://127.0.0.1:1/reward?token=redacted answered 500 Internal Server Error: bad token ${BEARER} for ?token=${URL_TOKEN}`;
    await ledger.recordDeadLetter({ key: vote.key, hook: 'reward', vote, attempts: 6, error, failedAt: new Date().toISOString() });
    await ledger.close();
    for (const args of [['votes', 'failed'], ['votes', 'failed', '--json']]) {
      const cli = spawnCli([...args, '--config', 'agent.json'], { cwd: dir, env: {} });
      expect(await cli.exit(), args.join(' ')).toBe(0);
      expect(cli.stdout()).toContain('answered 500 Internal Server Error: bad token [redacted] for ?token=[redacted]');
      expect(leaks({ [args.join(' ')]: cli.stdout() + cli.stderr() }, { 'the token': BEARER, "the URL's token": URL_TOKEN })).toEqual([]);
    }
  });
});
