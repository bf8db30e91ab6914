import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runWebhooksTestCommand, WEBHOOKS_TEST_HELP } from '../../../src/cli/commands/webhooks-test.js';
import type { CliIo } from '../../../src/cli/io.js';
import { parseLegacyVote, verifyDelivery } from '../../../src/webhooks/verify.js';
import { freePort } from '../../helpers/ports.js';
import { startReceiver } from '../../helpers/receiver.js';
import { verifySignature } from '../../helpers/verify-signature.js';

const SECRET = 'whs_cli_test_secret_5f2c9d';
const LEGACY = 'legacy-cli-secret-77';

async function run(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    env: {},
    cwd: process.cwd(),
    stopRequested: new Promise<string>(() => undefined),
    logStream: new Writable({ write: (_chunk, _encoding, done) => done() }),
    isTTY: false,
    owner: { pid: process.pid, host: 'test-host' },
    isProcessAlive: () => true,
  };
  const code = await runWebhooksTestCommand(argv, io);
  // The secret given on the command line must never come back out.
  expect(stdout + stderr).not.toContain(SECRET);
  expect(stdout + stderr).not.toContain(LEGACY);
  return { code, stdout, stderr };
}

describe('listing-agent webhooks test', () => {
  it('sends a signed webhook.test by default and prints the status and the time taken', async () => {
    const receiver = await startReceiver(() => ({ status: 204 }));
    const { code, stdout } = await run(['--url', receiver.url, '--secret', SECRET]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^webhook\.test to http:\/\/127\.0\.0\.1:\d+\/hook: 204 No Content in \d+ ms, trace [0-9a-f-]{36}\n$/);
    const [request] = receiver.requests;
    expect(request!.method).toBe('POST');
    expect(request!.headers['content-type']).toBe('application/json');
    const check = verifySignature(request!, SECRET);
    expect(check.valid).toBe(true);
    expect(Math.abs(check.t! - Date.now() / 1000)).toBeLessThan(30);
    expect(request!.headers['x-topgg-trace']).toBe(stdout.match(/trace (\S+)/)![1]);
    expect(request!.json).toMatchObject({ type: 'webhook.test', data: { project: { type: 'bot', platform: 'discord' }, user: {} } });
  });

  it('sends a realistic vote.create that the verifier accepts', async () => {
    const receiver = await startReceiver(() => ({ status: 200, json: { ok: true } }));
    const { code, stdout } = await run(['--url', receiver.url, '--secret', SECRET, '--type', 'vote.create']);
    expect(code).toBe(0);
    expect(stdout).toContain('vote.create to');
    expect(stdout).toContain('answer: {"ok":true}');
    const request = receiver.requests[0]!;
    expect(verifySignature(request, SECRET).valid).toBe(true);
    const result = verifyDelivery({ rawBody: request.rawBody, headers: request.headers, secrets: [SECRET], now: Date.now() });
    expect(result.ok && result.event.type).toBe('vote.create');
    if (result.ok && result.event.type === 'vote.create') {
      const { data } = result.event;
      expect(Date.parse(data.expires_at) - Date.parse(data.created_at)).toBe(12 * 3600 * 1000);
      expect([1, 2]).toContain(data.weight);
    }
  });

  it('exits 1 when the URL refuses the delivery, and shows its answer', async () => {
    const receiver = await startReceiver(() => ({ status: 401, json: { error: 'bad signature' } }));
    const { code, stdout, stderr } = await run(['--url', receiver.url, '--secret', SECRET]);
    expect(code).toBe(1);
    expect(stdout).toContain(': 401 Unauthorized in');
    expect(stdout).toContain('answer: {"error":"bad signature"}');
    expect(stderr).toContain('did not accept');
  });

  it('exits 1 when nothing listens, and when the answer does not come in time', async () => {
    const port = await freePort();
    const refused = await run(['--url', `http://127.0.0.1:${port}/hook`, '--secret', SECRET]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/could not be reached \(.*ECONNREFUSED.*\) after \d+ ms/);

    const receiver = await startReceiver(() => 'hang');
    const hung = await run(['--url', receiver.url, '--secret', SECRET, '--timeout', '200']);
    expect(hung.code).toBe(1);
    expect(hung.stderr).toContain('no answer within 200 ms');
  });

  it('does not print the query string of the URL, which may hold a credential', async () => {
    const receiver = await startReceiver(() => ({ status: 204 }));
    const { code, stdout } = await run(['--url', `${receiver.url}?token=hunter2`, '--secret', SECRET]);
    expect(code).toBe(0);
    expect(stdout).not.toContain('hunter2');
    expect(receiver.requests[0]!.path).toBe('/hook?token=hunter2');
  });

  it('sends a legacy v0 vote with --v0 --authorization', async () => {
    const receiver = await startReceiver(() => ({ status: 200 }));
    expect((await run(['--url', receiver.url, '--v0', '--authorization', LEGACY])).code).toBe(0);
    expect((await run(['--url', receiver.url, '--v0', '--authorization', LEGACY, '--type', 'upvote'])).code).toBe(0);
    const [test, upvote] = receiver.requests;
    expect(test!.headers.authorization).toBe(LEGACY);
    expect(test!.headers['x-topgg-signature']).toBeUndefined();
    expect(parseLegacyVote(test!.rawBody)).toMatchObject({ ok: true, vote: { type: 'test', isWeekend: expect.any(Boolean) } });
    expect(parseLegacyVote(upvote!.rawBody)).toMatchObject({ ok: true, vote: { type: 'upvote' } });
  });

  it('prints its help', async () => {
    const { code, stdout } = await run(['--help']);
    expect(code).toBe(0);
    expect(stdout).toBe(WEBHOOKS_TEST_HELP);
  });

  it.each([
    [[], '--url'],
    [['--url', 'http://127.0.0.1:1/'], '--secret'],
    [['--url', 'not a url', '--secret', SECRET], 'not a URL'],
    [['--url', 'ftp://127.0.0.1/', '--secret', SECRET], 'http or https'],
    [['--url', 'http://127.0.0.1:1/', '--secret', SECRET, '--type', 'vote.delete'], '--type'],
    [['--url', 'http://127.0.0.1:1/', '--secret', SECRET, '--authorization', LEGACY], '--v0'],
    [['--url', 'http://127.0.0.1:1/', '--v0'], '--authorization'],
    [['--url', 'http://127.0.0.1:1/', '--v0', '--authorization', LEGACY, '--secret', SECRET], '--authorization only'],
    [['--url', 'http://127.0.0.1:1/', '--secret', SECRET, '--timeout', '0'], '--timeout'],
    [['--url', 'http://127.0.0.1:1/', '--bogus'], 'bogus'],
    [['--url', 'http://127.0.0.1:1/', SECRET], 'not shown'],
  ])('exits 2 for a usage error: %j', async (argv, hint) => {
    const { code, stderr } = await run(argv as string[]);
    expect(code).toBe(2);
    expect(stderr).toContain(hint);
    expect(stderr).toContain("See 'listing-agent webhooks test --help'.");
  });
});
