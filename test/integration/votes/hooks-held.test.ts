import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpHook } from '../../../src/public/votes.js';
import { signDelivery } from '../../../src/public/webhooks.js';
import { spawnCli } from '../../helpers/cli.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { freePort } from '../../helpers/ports.js';
import { sendOnFreshConnection } from '../../helpers/sockets.js';
import { hookContext, hookFailure, sampleVote } from '../../helpers/votes.js';

/*
 * Issue 34, "what held, and must keep holding", for the reward hooks: an exec hook runs its
 * command without a shell, so no metacharacter of the config or of a vote ever runs; an http hook
 * follows no redirect (over real sockets: the redirect's target never hears of the vote).
 */

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A server on 127.0.0.1:0 that answers every request with `answer`, and counts them. */
async function serve(answer: (res: import('node:http').ServerResponse) => void) {
  let requests = 0;
  const server = createServer((req, res) => {
    requests += 1;
    req.resume();
    req.on('end', () => answer(res));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, requests: () => requests };
}

describe('an http hook', () => {
  it('follows no redirect: the target is never called, and the failure says to configure the final URL', async () => {
    const target = await serve((res) => res.writeHead(204).end());
    for (const status of [301, 302, 303, 307, 308]) {
      const redirecting = await serve((res) => res.writeHead(status, { location: target.url }).end());
      const hook = createHttpHook({ name: 'shop', url: redirecting.url, timeoutMs: 2_000, retries: 0 });
      const vote = sampleVote();
      const error = await hookFailure(hook.run(vote, hookContext(vote)));
      expect(error.message).toContain('(redirects are not followed: configure the final URL)');
      expect(redirecting.requests()).toBe(1);
    }
    expect(target.requests()).toBe(0);
  });
});

describe('an exec hook of the daemon', () => {
  it('runs without a shell: metacharacters in its command and a vote stay text, nothing they name runs', { timeout: 60_000 }, async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const dir = await mkdtemp(join(tmpdir(), 'la-exec-held-'));
    const port = await freePort();
    const seen = join(dir, 'seen.json');
    // Each would create a file in `dir` if a shell read it.
    const planted = ['$(touch a1)', '`touch a2`', '; touch a3', '| touch a4', '&& touch a5', '> a6', "'; touch a7; '", '"$(touch a8)"'];
    const script = `let stdin = ''; process.stdin.on('data', (c) => (stdin += c)).on('end', () =>
      require('node:fs').writeFileSync(${JSON.stringify(seen)}, JSON.stringify({ argv: process.argv.slice(1), stdin })));`;
    const secret = 'whs_exec_held_secret_0123456789';
    const config = {
      service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
      health: { enabled: false },
      state: { directory: './state' },
      log: { format: 'json' },
      webhooks: { enabled: true, listen: `127.0.0.1:${port}`, secrets: [secret] },
      votes: { hooks: [{ type: 'exec', name: 'reward', command: [process.execPath, '-e', script, ...planted], retries: 0 }] },
    };
    await writeFile(join(dir, 'agent.json'), JSON.stringify(config));
    const cli = spawnCli(['run', '--config', 'agent.json'], { cwd: dir, env: {} });
    await cli.lineContaining('agent ready', 30_000);

    const name = '$(touch b1); `touch b2` | touch b3 && touch b4';
    const createdAt = new Date().toISOString();
    const body = JSON.stringify({
      type: 'vote.create',
      data: {
        id: '1500000000000000001',
        weight: 1,
        created_at: createdAt,
        expires_at: new Date(Date.parse(createdAt) + 43_200_000).toISOString(),
        project: { id: fx.projectId, type: 'bot', platform: 'discord', platform_id: fx.platformId },
        user: { id: '500000000000000001', platform_id: '200000000000000002', name, avatar_url: null },
      },
    });
    const signature = signDelivery({ secret, rawBody: body, timestampSeconds: Math.floor(Date.now() / 1000) });
    const headers = { 'content-type': 'application/json', ...signature };
    expect((await sendOnFreshConnection(`http://127.0.0.1:${port}/webhooks/listing`, { method: 'POST', body, headers })).status).toBe(204);
    await cli.lineContaining('vote rewarded', 30_000);
    cli.child.kill('SIGTERM');
    expect(await cli.exit()).toBe(0);

    const { argv, stdin } = JSON.parse(await readFile(seen, 'utf8')) as { argv: string[]; stdin: string };
    expect(argv).toEqual(planted);
    expect(JSON.parse(stdin).vote.user.name).toBe(name);
    for (const file of ['a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'a8', 'b1', 'b2', 'b3', 'b4']) {
      expect({ file, exists: existsSync(join(dir, file)) }).toEqual({ file, exists: false });
    }
  });
});
