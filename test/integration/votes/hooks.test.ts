import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startReceiver } from '../../helpers/receiver.js';
import { verifySignature } from '../../helpers/verify-signature.js';
import { createExecHook, createHttpHook, hooksFromConfig, voteHookBody } from '../../../src/votes/hooks/index.js';
import { hookContext, hookFailure, sampleVote } from '../../helpers/votes.js';

const SECRET = 'whs_integration_secret_1234';
const AUTHORIZATION = 'Bearer hook-authorization-5678';

const vote = sampleVote({ key: '777:1735732800000', userId: '777', weight: 2 });
const context = (attempt = 1, signal?: AbortSignal) => hookContext(vote, attempt, signal);

describe('http hook against a local receiver', () => {
  it('POSTs the body with headers and a signature the independent verifier accepts', async () => {
    const receiver = await startReceiver(() => ({ status: 200, json: { ok: true } }));
    const now = 1_735_732_999_500;
    const hook = createHttpHook({ name: 'http-1', url: receiver.url, secret: SECRET, authorization: AUTHORIZATION, timeoutMs: 5000, retries: 2, now: () => now });
    await hook.run(vote, context(2));
    const [request] = receiver.requests;
    expect(request!.method).toBe('POST');
    expect(request!.path).toBe('/hook');
    expect(request!.json).toEqual(voteHookBody(vote));
    expect(request!.headers).toMatchObject({
      'content-type': 'application/json',
      'idempotency-key': vote.key,
      'x-listing-agent-attempt': '2',
      authorization: AUTHORIZATION,
    });
    expect(verifySignature(request!, SECRET)).toEqual({ valid: true, t: 1_735_732_999 });
    expect(verifySignature(request!, 'whs_some_other_secret').valid).toBe(false);
  });

  it('takes any 2xx as success', async () => {
    for (const status of [200, 201, 202, 204]) {
      const receiver = await startReceiver(() => ({ status }));
      await expect(createHttpHook({ name: 'h', url: receiver.url }).run(vote, context())).resolves.toBeUndefined();
    }
  });

  it('fails on a 500 with the status and the start of the answer, never the secret', async () => {
    const receiver = await startReceiver(() => ({ status: 500, json: { error: 'reward service down', echo: AUTHORIZATION } }));
    const hook = createHttpHook({ name: 'http-1', url: receiver.url, secret: SECRET, authorization: AUTHORIZATION });
    const error = await hookFailure(hook.run(vote, context()));
    expect(error).toMatchObject({ code: 'vote_hook_failed', reason: 'status', status: 500, hook: 'http-1' });
    expect(error.message).toBe(`hook "http-1": POST ${receiver.url} answered 500 Internal Server Error: {"error":"reward service down","echo":"[redacted]"}`);
    expect(error.message).not.toContain(SECRET);
  });

  it('fails after timeoutMs when the receiver never answers', async () => {
    const receiver = await startReceiver(() => 'hang');
    const hook = createHttpHook({ name: 'slow', url: receiver.url, secret: SECRET, timeoutMs: 200 });
    const started = Date.now();
    const error = await hookFailure(hook.run(vote, context()));
    expect(Date.now() - started).toBeLessThan(3000);
    expect(error.reason).toBe('timeout');
    expect(error.message).toBe(`hook "slow": POST ${receiver.url} got no answer within 200 ms (raise votes.hooks[].timeout or make the receiver answer sooner)`);
  });

  it('fails with the network error when nothing listens', async () => {
    const receiver = await startReceiver();
    await receiver.close();
    const error = await hookFailure(createHttpHook({ name: 'gone', url: receiver.url, authorization: AUTHORIZATION }).run(vote, context()));
    expect(error.reason).toBe('network');
    expect(error.message).toMatch(/^hook "gone": POST http:\/\/127\.0\.0\.1:\d+\/hook failed: .*ECONNREFUSED/);
    expect(error.message).not.toContain('hook-authorization');
  });

  it('stops when the call is aborted (the agent stopping)', async () => {
    const receiver = await startReceiver(() => 'hang');
    const controller = new AbortController();
    const pending = hookFailure(createHttpHook({ name: 'h', url: receiver.url, timeoutMs: 10_000 }).run(vote, context(1, controller.signal)));
    await receiver.waitFor(1);
    controller.abort();
    expect((await pending).reason).toBe('aborted');
  });
});

describe('exec hook', () => {
  let dir = '';
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
    dir = '';
  });
  const temp = async () => (dir = await mkdtemp(join(tmpdir(), 'listing-hooks-')));
  const node = (script: string, ...args: string[]) => [process.execPath, '-e', script, ...args];

  it('writes the body to stdin and the vote to the environment', async () => {
    const out = join(await temp(), 'seen.json');
    const script = `
      let stdin = '';
      process.stdin.on('data', (c) => (stdin += c)).on('end', () => {
        const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('LISTING_') || k === 'FOO'));
        require('node:fs').writeFileSync(process.argv[1], JSON.stringify({ stdin, env, cwd: process.cwd() }));
      });`;
    const hook = createExecHook({
      name: 'exec-1',
      command: node(script, out),
      env: { FOO: 'bar', LISTING_VOTE_KEY: 'stale', UNSET: undefined },
      cwd: dir,
      timeoutMs: 10_000,
      retries: 1,
    });
    await hook.run(vote, context(4));
    const seen = JSON.parse(await readFile(out, 'utf8')) as { stdin: string; env: Record<string, string>; cwd: string };
    expect(seen.stdin).toBe(JSON.stringify(voteHookBody(vote)));
    expect(seen.cwd).toBe(dir);
    expect(seen.env).toEqual({
      FOO: 'bar',
      LISTING_VOTE_KEY: vote.key,
      LISTING_VOTE_USER_ID: '777',
      LISTING_VOTE_PLATFORM_ID: '210987654321098765',
      LISTING_VOTE_PROJECT_ID: '8',
      LISTING_VOTE_WEIGHT: '2',
      LISTING_VOTE_CREATED_AT: vote.createdAt,
      LISTING_VOTE_EXPIRES_AT: vote.expiresAt,
      LISTING_VOTE_ROAD: 'poll',
      LISTING_VOTE_ATTEMPT: '4',
      LISTING_IDEMPOTENCY_KEY: vote.key,
      LISTING_HOOK_TYPE: 'vote',
    });
  });

  it("from the config: the base env, the listed names copied from parentEnv, and a listed URL's password kept out of its failure", async () => {
    const out = join(await temp(), 'seen.json');
    const script = `require('node:fs').writeFileSync(process.argv[1], JSON.stringify(process.env)); console.error('cannot reach ' + process.env.DATABASE_URL); process.exit(2)`;
    const [hook] = hooksFromConfig([{ type: 'exec', command: node(script, out), env: ['DATABASE_URL', 'NOT_SET'], timeout: 10_000, retries: 0 }], {
      env: { PATH: '/usr/bin' },
      parentEnv: { DATABASE_URL: 'postgres://app:db-password-77@db/rewards', UNLISTED_SECRET: 'unlisted-secret-88' },
    });
    const error = await hookFailure(hook!.run(vote, context()));
    const seen = JSON.parse(await readFile(out, 'utf8')) as Record<string, string>;
    expect(Object.keys(seen).filter((name) => !name.startsWith('LISTING_')).sort()).toEqual(['DATABASE_URL', 'PATH']);
    expect(seen.DATABASE_URL).toBe('postgres://app:db-password-77@db/rewards');
    expect(error.message).toContain('stderr: cannot reach postgres://[redacted]@db/rewards');
    expect(error.message).not.toContain('db-password-77');
  });

  it('succeeds on exit 0 even when the command never reads stdin', async () => {
    await expect(createExecHook({ name: 'e', command: node('process.exit(0)') }).run(vote, context())).resolves.toBeUndefined();
  });

  it('fails on a non-zero exit with the code and the last lines of stderr', async () => {
    const script = `for (let i = 1; i <= 8; i++) console.error('line ' + i); console.log('out'); process.exit(3)`;
    const error = await hookFailure(createExecHook({ name: 'exec-2', command: node(script, 'secret-arg-value') }).run(vote, context()));
    expect(error).toMatchObject({ reason: 'exit', exitCode: 3, signal: null });
    expect(error.message).toBe(`hook "exec-2": "${process.execPath}" exited with code 3; stderr: line 4 | line 5 | line 6 | line 7 | line 8`);
    expect(error.message).not.toContain('secret-arg-value');
  });

  it('quotes stdout when stderr is empty', async () => {
    const error = await hookFailure(createExecHook({ name: 'e', command: node(`console.log('no such user'); process.exit(1)`) }).run(vote, context()));
    expect(error.message).toContain('exited with code 1; stdout: no such user');
  });

  it('fails when a signal ends the command', async () => {
    const error = await hookFailure(createExecHook({ name: 'e', command: node(`process.kill(process.pid, 'SIGKILL')`) }).run(vote, context()));
    expect(error).toMatchObject({ reason: 'signal', signal: 'SIGKILL' });
    expect(error.message).toContain('was killed by SIGKILL');
  });

  it('kills the command with SIGTERM on timeout', async () => {
    const started = Date.now();
    const hook = createExecHook({ name: 'e', command: node(`console.error('working'); setInterval(() => {}, 1000)`), timeoutMs: 300 });
    const error = await hookFailure(hook.run(vote, context()));
    expect(Date.now() - started).toBeLessThan(3000);
    expect(error).toMatchObject({ reason: 'timeout', signal: 'SIGTERM' });
    expect(error.message).toBe(`hook "e": "${process.execPath}" did not finish within 300 ms and was killed with SIGTERM; stderr: working`);
  });

  it('follows with SIGKILL after the grace period when SIGTERM is ignored', async () => {
    const script = `process.on('SIGTERM', () => console.error('ignoring SIGTERM')); console.error('ready'); setInterval(() => {}, 1000)`;
    const hook = createExecHook({ name: 'e', command: node(script), timeoutMs: 300, killGraceMs: 200 });
    const started = Date.now();
    const error = await hookFailure(hook.run(vote, context()));
    expect(Date.now() - started).toBeLessThan(3000);
    expect(error).toMatchObject({ reason: 'timeout', signal: 'SIGKILL' });
    expect(error.message).toContain('was killed with SIGKILL');
  });

  it('stops the command when the call is aborted', async () => {
    const controller = new AbortController();
    const pending = hookFailure(createExecHook({ name: 'e', command: node('setInterval(() => {}, 1000)'), timeoutMs: 10_000 }).run(vote, context(1, controller.signal)));
    setTimeout(() => controller.abort(), 100);
    const error = await pending;
    expect(error.reason).toBe('aborted');
    expect(error.message).toContain('was stopped with SIGTERM (the agent is stopping)');
  });

  it('says command not found, pointing at the config, for a missing program', async () => {
    const error = await hookFailure(
      createExecHook({ name: 'exec-3', command: ['no-such-program-9c2e', 'arg'], configPath: 'votes.hooks[2]' }).run(vote, context()),
    );
    expect(error.reason).toBe('spawn');
    expect(error.message).toBe('hook "exec-3": command not found: "no-such-program-9c2e": check votes.hooks[2].command');
  });

  it('says a file is not executable', async () => {
    const error = await hookFailure(createExecHook({ name: 'e', command: [await temp()] }).run(vote, context()));
    expect(error.reason).toBe('spawn');
    expect(error.message).toMatch(/is not executable \(EACCES\)|could not be started/);
  });

  it('caps huge output in memory and in the message', async () => {
    const script = `
      const chunk = 'x'.repeat(1 << 16) + '\\n';
      for (let i = 0; i < 160; i++) { process.stdout.write(chunk); process.stderr.write(chunk); }
      process.stderr.write('the real error\\n', () => process.exit(2));`;
    const hook = createExecHook({ name: 'e', command: node(script), timeoutMs: 15_000 });
    const error = await hookFailure(hook.run(vote, context()));
    expect(error.exitCode).toBe(2);
    expect(error.message.length).toBeLessThan(1000);
    // 20 MB went by; the kept tail starts inside a line of x's, which is left out as cut.
    expect(error.message).toBe(`hook "e": "${process.execPath}" exited with code 2; stderr: the real error`);
  });

  it('cuts one endless line from the front, keeping its end', async () => {
    const script = `process.stderr.write('y'.repeat(5_000_000) + ' END', () => process.exit(1))`;
    const error = await hookFailure(createExecHook({ name: 'e', command: node(script), timeoutMs: 15_000 }).run(vote, context()));
    expect(error.message).toMatch(/; stderr: …y{500,} END$/);
    expect(error.message.length).toBeLessThan(1000);
  });

  it('ends even when a background process keeps the output pipes open', async () => {
    const script = `require('node:child_process').spawn(process.execPath, ['-e', 'setTimeout(() => {}, 3000)'], { stdio: 'inherit' }); process.exit(0)`;
    const started = Date.now();
    await createExecHook({ name: 'e', command: node(script) }).run(vote, context());
    expect(Date.now() - started).toBeLessThan(2500);
  });
});
