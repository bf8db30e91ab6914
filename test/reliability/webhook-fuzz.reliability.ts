import { createHmac } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { describe, expect, it } from 'vitest';
import { setupBot, startTestEmulator } from '../helpers/emulator.js';
import { between, crashSigns, freePort, pick, rng, rssKiB, secretValue, SEED, SHORT, sleep, startDaemon, tokenSecrets, Transcript } from '../helpers/reliability.js';
import { startVoteHookServer } from '../helpers/vote-hook-server.js';

/**
 * Hostile input: the webhook fuzz of the webhooks issue at volume. Signed, unsigned and mutated
 * deliveries at the daemon's real receiver over HTTP (keep-alive, 32 at once), valid ones mixed
 * with hostile ones. The process must stay up with a flat RSS; every valid vote reaches the hook
 * exactly once (a valid repeat never again); nothing hostile reaches it. Every hostile request
 * carries a user never used by a valid one, so a leak shows as a stranger at the hook.
 */

const REQUESTS = SHORT ? 10_000 : 100_000;
const CONCURRENCY = 32;
const PATH = '/webhooks/listing';
/** The receiver's body cap (README: 413 above 64 KiB). */
const MAX_BODY = 64 * 1024;
/** RSS may grow this much from the warm-up to the end (V8's heap settles, the ledger holds the valid keys). */
const RSS_MARGIN_KIB = 64 * 1024;

/** Each kind of request, its weight, and whether it is valid. */
const KINDS = {
  vote: { weight: 30, valid: true },
  'vote-again': { weight: 10, valid: true },
  'legacy-vote': { weight: 5, valid: true },
  'test-event': { weight: 10, valid: true },
  unsigned: { weight: 80, valid: false },
  'wrong-secret': { weight: 80, valid: false },
  stale: { weight: 60, valid: false },
  future: { weight: 60, valid: false },
  'tampered-body': { weight: 80, valid: false },
  'tampered-signature': { weight: 80, valid: false },
  'malformed-header': { weight: 120, valid: false },
  'signed-garbage': { weight: 80, valid: false },
  'legacy-wrong': { weight: 60, valid: false },
  'legacy-with-bad-signature': { weight: 30, valid: false },
  oversize: { weight: 10, valid: false },
  'wrong-method': { weight: 30, valid: false },
  'wrong-path': { weight: 30, valid: false },
  'random-bytes': { weight: 60, valid: false },
} as const;
type Kind = keyof typeof KINDS;

interface Planned {
  kind: Kind;
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body?: Buffer;
  /** The user a valid vote is for (the hook must see it once). */
  validUser?: string;
  /** Statuses this request may get. */
  expect: number[];
  /** Which variant of its kind (never a secret): for the report. */
  note?: string;
}

const sign = (secret: string, t: number, body: Buffer | string) => createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
const PRINTABLE = ' !"#$%&\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~';

describe('reliability: hostile input (webhook fuzz)', () => {
  it(`takes ${REQUESTS.toLocaleString('en')} signed, unsigned and mutated deliveries: stays up, flat RSS, valid ones fire once, hostile ones never`, { timeout: 600_000 }, async () => {
    const started = Date.now();
    const random = rng('webhook-fuzz');
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const cwd = await mkdtemp(join(tmpdir(), 'la-reliability-fuzz-'));
    const transcript = new Transcript();
    const secrets: Record<string, string> = {
      ...tokenSecrets('service.token', fx.projectToken),
      'webhooks.secrets[0]': `whs_${secretValue('current')}`,
      'webhooks.secrets[1]': `whs_${secretValue('previous')}`,
      'webhooks.legacyAuthorization': secretValue('legacyauth'),
      'votes.hooks[0].authorization': `Bearer ${secretValue('hookauth')}`,
    };
    const accepted = [secrets['webhooks.secrets[0]']!, secrets['webhooks.secrets[1]']!];
    const hook = await startVoteHookServer({ authorization: secrets['votes.hooks[0].authorization'] });
    const port = await freePort();
    await writeFile(
      join(cwd, 'agent.json'),
      JSON.stringify({
        service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 },
        state: { directory: './state' },
        health: { enabled: false },
        log: { level: 'info', format: 'json' },
        votes: { enabled: false, hooks: [{ type: 'http', name: 'reward', url: hook.url, authorization: secrets['votes.hooks[0].authorization'], retries: 5 }] },
        webhooks: { enabled: true, listen: `127.0.0.1:${port}`, path: PATH, secrets: accepted, legacyAuthorization: secrets['webhooks.legacyAuthorization'] },
      }),
    );
    const daemon = startDaemon(cwd, ['--config', 'agent.json']);
    await daemon.waitFor('"msg":"agent ready"', 60_000);

    // ---- The plan: a seeded mix of kinds, each request made when its turn comes.
    let userSeq = 0;
    const freshUser = () => `4${String(SEED % 1000).padStart(3, '0')}${String(++userSeq).padStart(14, '0')}`;
    let lastCreated = Date.now();
    const validVotes: Buffer[] = [];
    const voteBody = (userId: string, createdAt?: string) => {
      lastCreated = Math.max(Date.now(), lastCreated + 1);
      const created = createdAt ?? new Date(lastCreated).toISOString();
      return Buffer.from(
        JSON.stringify({
          type: 'vote.create',
          data: {
            id: String(9_000_000_000_000_000_000n + BigInt(userSeq)),
            weight: 1,
            created_at: created,
            expires_at: new Date(Date.parse(created) + 12 * 3600_000 || lastCreated + 12 * 3600_000).toISOString(),
            project: { id: fx.projectId, type: 'bot', platform: 'discord', platform_id: fx.platformId },
            user: { id: userId, platform_id: userId, name: 'fuzz', avatar_url: 'https://cdn.example/a.png' },
          },
        }),
      );
    };
    const nowS = () => Math.floor(Date.now() / 1000);
    const signed = (body: Buffer, secret = pick(random, accepted), t = nowS() - between(random, 0, 200)) => ({ 'content-type': 'application/json', 'x-topgg-signature': `t=${t},v1=${sign(secret, t, body)}` });
    const printable = (min: number, max: number) => Array.from({ length: between(random, min, max) }, () => pick(random, [...PRINTABLE])).join('');
    const hex = (n: number) => Array.from({ length: n }, () => pick(random, [...'0123456789abcdef'])).join('');
    const flip = (text: string) => {
      const i = between(random, 0, text.length - 1);
      const c = text[i]!;
      const swapped = /[0-9a-f]/.test(c) ? (c === 'a' ? 'b' : 'a') : c === 'x' ? 'y' : 'x';
      return `${text.slice(0, i)}${swapped}${text.slice(i + 1)}`;
    };
    const kindList = Object.entries(KINDS) as [Kind, (typeof KINDS)[Kind]][];
    const totalWeight = kindList.reduce((n, [, k]) => n + k.weight, 0);
    const drawKind = (): Kind => {
      let left = random() * totalWeight;
      for (const [kind, { weight }] of kindList) if ((left -= weight) < 0) return kind;
      return 'unsigned';
    };

    function plan(): Planned {
      const kind = drawKind();
      const post = (headers: Planned['headers'], body: Buffer, expect: number[], validUser?: string): Planned => ({ kind, method: 'POST', path: PATH, headers, body, expect, ...(validUser ? { validUser } : {}) });
      switch (kind) {
        case 'vote': {
          const user = freshUser();
          const body = voteBody(user);
          validVotes.push(body);
          return post(signed(body), body, [204], user);
        }
        case 'vote-again': {
          const body = validVotes.length > 0 ? pick(random, validVotes) : voteBody(freshUser());
          if (validVotes.length === 0) validVotes.push(body);
          return post(signed(body), body, [204], JSON.parse(body.toString()).data.user.id);
        }
        case 'legacy-vote': {
          const user = freshUser();
          const body = Buffer.from(JSON.stringify({ bot: fx.platformId, user, type: 'upvote', isWeekend: false, query: '' }));
          return post({ 'content-type': 'application/json', authorization: secrets['webhooks.legacyAuthorization']! }, body, [204], user);
        }
        case 'test-event': {
          const body = Buffer.from(JSON.stringify({ type: 'webhook.test', data: { project: { id: fx.projectId, type: 'bot', platform: 'discord', platform_id: fx.platformId }, user: { id: freshUser(), platform_id: '1', name: 't', avatar_url: null } } }));
          return post(signed(body), body, [204]);
        }
        case 'unsigned':
          return post({ 'content-type': 'application/json' }, voteBody(freshUser()), [401]);
        case 'wrong-secret': {
          const body = voteBody(freshUser());
          const secret = pick(random, [`whs_${hex(32)}`, `${accepted[0]}x`, accepted[0]!.slice(0, -1), '', accepted[1]!.toUpperCase()]);
          return post(signed(body, secret), body, [401]);
        }
        case 'stale': {
          const body = voteBody(freshUser());
          return post(signed(body, accepted[0], nowS() - between(random, 301, 10_000_000)), body, [401]);
        }
        case 'future': {
          const body = voteBody(freshUser());
          return post(signed(body, accepted[0], nowS() + between(random, 301, 10_000_000)), body, [401]);
        }
        case 'tampered-body': {
          const body = voteBody(freshUser());
          const headers = signed(body);
          return post(headers, Buffer.from(flip(body.toString())), [401]);
        }
        case 'tampered-signature': {
          const body = voteBody(freshUser());
          const headers = signed(body);
          headers['x-topgg-signature'] = flip(headers['x-topgg-signature']);
          return post(headers, body, [401]);
        }
        case 'malformed-header': {
          const body = voteBody(freshUser());
          const t = nowS();
          const good = sign(accepted[0]!, t, body);
          const variants = [
            '',
            ' ',
            `t=${t}`,
            `v1=${good}`,
            `t=,v1=${good}`,
            `t=${t},v1=`,
            `t=${t},v1=${good.toUpperCase()}`,
            `t=${t},v1=${good.slice(0, 63)}`,
            `t=${t},v1=${good}0`,
            `t=${t},v1=${hex(64).replace(/./, 'g')}`,
            `t=${t},t=${t},v1=${good}`,
            // (Two v1 entries are allowed by design, for rotation: verify.ts; not hostile.)
            `t=${t},v1=${good},v1=${hex(63)}`,
            `t = ${t}, v1 = ${good}`,
            // (Leading and trailing spaces of a header value are not part of it in HTTP: not sent.)
            `t=${t},\tv1=${good}`,
            `t=${t};v1=${good}`,
            `t=${t}.5,v1=${good}`,
            `t=-${t},v1=${good}`,
            `t=0x${t.toString(16)},v1=${good}`,
            `t=${t}${'0'.repeat(400)},v1=${good}`,
            `v0=${good}`,
            printable(1, 300),
            `t=${printable(0, 20)},v1=${printable(0, 80)}`,
          ];
          const variant = between(random, 0, variants.length - 1);
          const value = variants[variant]!;
          // Some of these are near misses of a valid header: each must still be refused.
          const twice = random() < 0.1;
          const headers: Planned['headers'] = { 'content-type': 'application/json', 'x-topgg-signature': twice ? [value, `t=${t},v1=${good}`] : value };
          return { ...post(headers, body, [401, 400]), note: `variant ${variant}${twice ? ' + a second valid header' : ''}` };
        }
        case 'signed-garbage': {
          const user = freshUser();
          const text = pick(random, [
            '',
            'not json',
            '[]',
            'null',
            '"vote.create"',
            '{}',
            '{"type":"vote.create"}',
            '{"type":"vote.create","data":null}',
            '{"type":"vote.create","data":[]}',
            '{"type":"nope","data":{}}',
            JSON.stringify({ type: 'vote.create', data: { ...JSON.parse(voteBody(user).toString()).data, user: { id: Number(user) } } }),
            JSON.stringify({ type: 'vote.create', data: { ...JSON.parse(voteBody(user).toString()).data, created_at: 'yesterday' } }),
            JSON.stringify({ type: 'vote.create', data: { ...JSON.parse(voteBody(user).toString()).data, created_at: '' } }),
            JSON.stringify({ type: 'vote.create', data: { ...JSON.parse(voteBody(user).toString()).data, user: undefined } }),
            JSON.stringify({ type: 'vote.create', data: { ...JSON.parse(voteBody(user).toString()).data, weight: 'heavy' } }),
            `{"type":"vote.create","data":${'['.repeat(5_000)}${']'.repeat(5_000)}}`,
            voteBody(user).toString().slice(0, -3),
          ]);
          const body = Buffer.from(text);
          return post(signed(body), body, [400]);
        }
        case 'legacy-wrong': {
          const body = Buffer.from(JSON.stringify({ bot: fx.platformId, user: freshUser(), type: 'upvote' }));
          const legacy = secrets['webhooks.legacyAuthorization']!;
          const variants = [legacy.slice(0, -1), `${legacy}\t${legacy}`, `Bearer ${legacy}`, legacy.toUpperCase(), printable(1, 80), `${legacy}${legacy}`];
          const variant = between(random, 0, variants.length - 1);
          return { ...post({ 'content-type': 'application/json', authorization: variants[variant]! }, body, [401]), note: `variant ${variant}` };
        }
        case 'legacy-with-bad-signature': {
          const body = Buffer.from(JSON.stringify({ bot: fx.platformId, user: freshUser(), type: 'upvote' }));
          return post({ 'content-type': 'application/json', authorization: secrets['webhooks.legacyAuthorization']!, 'x-topgg-signature': `t=${nowS()},v1=${hex(64)}` }, body, [401]);
        }
        case 'oversize': {
          const body = Buffer.alloc(between(random, MAX_BODY + 1, 4 * MAX_BODY), 0x7b);
          return post(random() < 0.5 ? signed(body) : { 'content-type': 'application/json' }, body, [413]);
        }
        case 'wrong-method': {
          const body = voteBody(freshUser());
          return { kind, method: pick(random, ['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']), path: PATH, headers: signed(body), body, expect: [405, 404] };
        }
        case 'wrong-path': {
          const body = voteBody(freshUser());
          return { kind, method: 'POST', path: pick(random, ['/', `${PATH}/`, `${PATH}x`, '/webhooks', `/${printable(1, 40).replace(/[\s?#%]/g, 'a')}`]), headers: signed(body), body, expect: [404] };
        }
        case 'random-bytes': {
          const body = Buffer.from(Array.from({ length: between(random, 0, 2_048) }, () => between(random, 0, 255)));
          return post({ 'content-type': pick(random, ['application/json', 'application/octet-stream', 'text/plain', printable(1, 30)]) }, body, [401]);
        }
      }
    }

    // ---- Sending.
    const pool = new Pool(`http://127.0.0.1:${port}`, { connections: CONCURRENCY, pipelining: 1, keepAliveTimeout: 4_000 });
    const byKind = new Map<Kind, { sent: number; statuses: Map<number | string, number> }>();
    const unexpected: string[] = [];
    const bodies = new Set<string>();
    const validUsers = new Set<string>();
    let sent = 0;
    let retried = 0;
    let rssWarm: number | undefined;
    const rssSamples: number[] = [];
    async function send(request: Planned): Promise<void> {
      for (let attempt = 1; ; attempt += 1) {
        let status: number | string;
        try {
          const res = await pool.request({ method: request.method, path: request.path, headers: request.headers, body: request.body ?? null, headersTimeout: 30_000, bodyTimeout: 30_000 });
          status = res.statusCode;
          const text = await res.body.text();
          if (bodies.size < 200 && text !== '') bodies.add(`${status} ${text}`);
        } catch (error) {
          status = (error as { code?: string }).code ?? 'network error';
        }
        // The service retries a 503 ("not recorded, retry"): so does this sender, for a valid vote.
        if (status === 503 && request.validUser !== undefined && attempt < 10) {
          retried += 1;
          await sleep(1_000);
          continue;
        }
        const entry = byKind.get(request.kind) ?? { sent: 0, statuses: new Map() };
        byKind.set(request.kind, entry);
        entry.sent += 1;
        entry.statuses.set(status, (entry.statuses.get(status) ?? 0) + 1);
        // An oversize body may be cut off mid-send: the receiver answers 413 and closes the connection.
        const cutOff = request.kind === 'oversize' && typeof status === 'string';
        if (!request.expect.includes(status as number) && !cutOff && unexpected.length < 50) unexpected.push(`${request.kind}${request.note ? ` (${request.note})` : ''} ${request.method} ${request.path}: got ${String(status)}, expected ${request.expect.join('/')}`);
        if (request.validUser !== undefined && status === 204) validUsers.add(request.validUser);
        return;
      }
    }
    const workers = Array.from({ length: CONCURRENCY }, async () => {
      while (sent < REQUESTS) {
        sent += 1;
        if (sent === Math.floor(REQUESTS / 10)) rssWarm = rssKiB(daemon.pid);
        if (sent % 1_000 === 0) {
          const kib = rssKiB(daemon.pid);
          if (kib !== undefined) rssSamples.push(kib);
        }
        await send(plan());
      }
    });
    await Promise.all(workers);
    const sendingMs = Date.now() - started;
    const rssEnd = rssKiB(daemon.pid);
    await pool.close();

    // Every valid vote accepted must reach the hook; give the pipeline time to drain, then a little more for strays.
    const deadline = Date.now() + 120_000;
    const hookUsers = () => new Set(hook.calls.map((c) => c.userId));
    while ([...validUsers].some((user) => !hookUsers().has(user)) && Date.now() < deadline && daemon.alive()) await sleep(200);
    await sleep(3_000);
    const aliveAtEnd = daemon.alive();
    const exit = await daemon.stop();
    transcript.add('daemon output', daemon.output());
    transcript.add('response bodies', [...bodies].join('\n'));

    const perUser = new Map<string, number>();
    for (const call of hook.calls) perUser.set(call.userId, (perUser.get(call.userId) ?? 0) + 1);
    const lost = [...validUsers].filter((user) => !perUser.has(user));
    const duplicated = [...perUser].filter(([user, n]) => validUsers.has(user) && n > 1).map(([user]) => user);
    const hostileReached = [...perUser.keys()].filter((user) => !validUsers.has(user));
    const signs = crashSigns(daemon.output());
    const hits = transcript.scan(secrets);
    const hostile = [...byKind].filter(([kind]) => !KINDS[kind].valid).reduce((n, [, e]) => n + e.sent, 0);
    const table = [...byKind]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([kind, e]) => `  ${kind.padEnd(26)} ${String(e.sent).padStart(6)}  ${[...e.statuses].map(([s, n]) => `${s}: ${n}`).join(', ')}`)
      .join('\n');
    console.log(`webhook fuzz, by kind (sent, statuses):\n${table}`);
    console.log(
      `webhook fuzz: ${sent} requests (${hostile} hostile, ${validUsers.size} valid votes, ${retried} retried after 503) in ${Math.round(sendingMs / 1000)} s, ` +
        `${aliveAtEnd ? 0 : 1} crashes, ${lost.length} lost, ${duplicated.length} duplicated, ${hostileReached.length} hostile reached the hook, ` +
        `${unexpected.length} unexpected answers, RSS ${Math.round((rssWarm ?? 0) / 1024)} -> ${Math.round((rssEnd ?? 0) / 1024)} MiB (max ${Math.round(Math.max(0, ...rssSamples) / 1024)}), ` +
        `${transcript.lines} lines scanned (${hits.length} secrets), ${Math.round((Date.now() - started) / 1000)} s (seed ${SEED})`,
    );

    expect(hits, 'secrets found in the captured output (source:line: secret name)').toEqual([]);
    expect(signs).toEqual([]);
    expect(aliveAtEnd, `the daemon died; its output ends with:\n${daemon.output().slice(-3_000)}`).toBe(true);
    expect(exit).toBe(0);
    expect(unexpected).toEqual([]);
    expect(hostileReached).toEqual([]);
    expect(lost).toEqual([]);
    expect(duplicated).toEqual([]);
    expect(hook.refused).toEqual([]);
    expect(rssWarm).toBeDefined();
    expect(rssEnd!).toBeLessThanOrEqual(rssWarm! + RSS_MARGIN_KIB);
  });
});
