import { describe, expect, it } from 'vitest';
import { signDelivery, verifyDelivery, type VerifyDeliveryOptions, type VerifyFailure } from '../../../src/webhooks/verify.js';
import { header, NOW, NOW_S, OLD_SECRET, PROJECT, SECRET, USER, v1, VOTE_BODY, VOTE_EVENT } from './fixtures.js';

function verify(overrides: Partial<VerifyDeliveryOptions> & { signature?: string | string[] }): ReturnType<typeof verifyDelivery> {
  const { signature, ...rest } = overrides;
  const headers = 'headers' in overrides ? overrides.headers! : signature === undefined ? {} : { 'x-topgg-signature': signature };
  return verifyDelivery({ rawBody: VOTE_BODY, secrets: [SECRET], now: NOW, ...rest, headers });
}

function expectRefused(result: ReturnType<typeof verifyDelivery>, reason: VerifyFailure, status = 401): void {
  expect(result).toEqual({ ok: false, reason, status });
}

const HEX = v1(VOTE_BODY);

describe('verifyDelivery: accepted deliveries', () => {
  it('accepts a vote.create signed by signDelivery, with its trace ID and timestamp', () => {
    const headers = signDelivery({ secret: SECRET, rawBody: VOTE_BODY, timestampSeconds: NOW_S, traceId: 'trace-1' });
    const result = verifyDelivery({ rawBody: VOTE_BODY, headers, secrets: [SECRET], now: NOW });
    expect(result).toEqual({ ok: true, event: VOTE_EVENT, timestamp: NOW_S, traceId: 'trace-1' });
  });

  it('takes the raw body as bytes as well as text', () => {
    const bytes = new TextEncoder().encode(VOTE_BODY);
    expect(verify({ rawBody: bytes, signature: header(bytes) }).ok).toBe(true);
    expect(verify({ rawBody: Buffer.from(bytes), signature: header(bytes) }).ok).toBe(true);
  });

  it('accepts every event type of decisions.md and drops unknown fields', () => {
    const events = [
      { type: 'webhook.test', data: { project: PROJECT, user: USER } },
      { type: 'integration.create', data: { connection_id: 'c1', webhook_secret: 'whs_new', project: PROJECT, user: USER } },
      { type: 'integration.delete', data: { connection_id: 'c1' } },
    ];
    for (const event of events) {
      const body = JSON.stringify({ ...event, data: { ...event.data, extra: 1 }, extra: 2 });
      const result = verify({ rawBody: body, signature: header(body) });
      expect(result).toMatchObject({ ok: true, event });
      if (result.ok) expect(result.event.data).not.toHaveProperty('extra');
    }
  });

  it('reads a null or missing avatar_url as null', () => {
    const { avatar_url: _omit, ...noAvatar } = USER;
    const body = JSON.stringify({ type: 'webhook.test', data: { project: PROJECT, user: noAvatar } });
    const result = verify({ rawBody: body, signature: header(body) });
    expect(result.ok && result.event.type === 'webhook.test' && result.event.data.user.avatar_url).toBe(null);
  });

  it('accepts several v1 entries when one of them is valid, wherever it stands', () => {
    const wrong = 'ab'.repeat(32);
    expect(verify({ signature: `t=${NOW_S},v1=${wrong},v1=${HEX}` }).ok).toBe(true);
    expect(verify({ signature: `t=${NOW_S},v1=${HEX},v1=${wrong}` }).ok).toBe(true);
    expect(verify({ signature: `v1=${HEX},t=${NOW_S}` }).ok).toBe(true);
  });

  it('accepts either secret during a rotation', () => {
    const secrets = [SECRET, OLD_SECRET];
    expect(verify({ secrets, signature: header(VOTE_BODY, OLD_SECRET) }).ok).toBe(true);
    expect(verify({ secrets, signature: header(VOTE_BODY, SECRET) }).ok).toBe(true);
    // Both old and new signatures side by side, as a sender mid-rotation may send them.
    expect(verify({ secrets: [OLD_SECRET], signature: `t=${NOW_S},v1=${v1(VOTE_BODY, SECRET)},v1=${v1(VOTE_BODY, OLD_SECRET)}` }).ok).toBe(true);
  });

  it('skips unknown schemes beside v1 (a future v2)', () => {
    expect(verify({ signature: `t=${NOW_S},v2=xyz,v1=${HEX}` }).ok).toBe(true);
  });

  it('accepts t exactly at the tolerance, both ways, and honours a custom tolerance', () => {
    expect(verify({ signature: header(VOTE_BODY, SECRET, NOW_S - 300) }).ok).toBe(true);
    expect(verify({ signature: header(VOTE_BODY, SECRET, NOW_S + 300) }).ok).toBe(true);
    expect(verify({ signature: header(VOTE_BODY, SECRET, NOW_S - 900), toleranceSeconds: 900 }).ok).toBe(true);
    expectRefused(verify({ signature: header(VOTE_BODY, SECRET, NOW_S - 11), toleranceSeconds: 10 }), 'stale');
  });

  it('finds the header under another case when the headers object was built by hand', () => {
    expect(verify({ headers: { 'X-Topgg-Signature': header(VOTE_BODY) } }).ok).toBe(true);
  });

  it('keeps only a short printable trace ID', () => {
    const trace = (value: string) => verify({ headers: { 'x-topgg-signature': header(VOTE_BODY), 'x-topgg-trace': value } });
    expect(trace('a'.repeat(201))).toMatchObject({ ok: true, traceId: undefined });
    expect(trace('a\nforged log line')).toMatchObject({ ok: true, traceId: undefined });
  });
});

describe('verifyDelivery: malformed signature headers are 401, never an exception', () => {
  const cases: Array<[string, string | string[] | undefined, VerifyFailure]> = [
    ['no header', undefined, 'missing_signature'],
    ['an empty array of headers', [], 'missing_signature'],
    ['an empty header', '', 'malformed_signature'],
    ['t= only', 't=', 'malformed_signature'],
    ['t only', `t=${NOW_S}`, 'malformed_signature'],
    ['v1= only', 'v1=', 'malformed_signature'],
    ['v1 only', `v1=${HEX}`, 'malformed_signature'],
    ['an empty v1', `t=${NOW_S},v1=`, 'malformed_signature'],
    ['non-hex', `t=${NOW_S},v1=${'zz'.repeat(32)}`, 'malformed_signature'],
    ['uppercase hex', `t=${NOW_S},v1=${HEX.toUpperCase()}`, 'malformed_signature'],
    ['odd length', `t=${NOW_S},v1=${HEX.slice(0, 63)}`, 'malformed_signature'],
    ['one byte short', `t=${NOW_S},v1=${HEX.slice(0, 62)}`, 'malformed_signature'],
    ['one byte long', `t=${NOW_S},v1=${HEX}00`, 'malformed_signature'],
    ['a very long signature', `t=${NOW_S},v1=${'a'.repeat(100_000)}`, 'malformed_signature'],
    ['duplicated t', `t=${NOW_S},t=${NOW_S},v1=${HEX}`, 'malformed_signature'],
    ['duplicated t with different values', `t=${NOW_S - 9999},t=${NOW_S},v1=${HEX}`, 'malformed_signature'],
    ['a space after the comma', `t=${NOW_S}, v1=${HEX}`, 'malformed_signature'],
    ['a leading space', ` t=${NOW_S},v1=${HEX}`, 'malformed_signature'],
    ['a trailing newline', `t=${NOW_S},v1=${HEX}\n`, 'malformed_signature'],
    ['a space around =', `t = ${NOW_S},v1=${HEX}`, 'malformed_signature'],
    ['a tab inside the hex', `t=${NOW_S},v1=${HEX.slice(0, 32)}\t${HEX.slice(32)}`, 'malformed_signature'],
    ['a trailing comma', `t=${NOW_S},v1=${HEX},`, 'malformed_signature'],
    ['a semicolon separator', `t=${NOW_S};v1=${HEX}`, 'malformed_signature'],
    ['uppercase keys', `T=${NOW_S},V1=${HEX}`, 'malformed_signature'],
    ['a key without =', `t=${NOW_S},v1`, 'malformed_signature'],
    ['a doubled =', `t==${NOW_S},v1=${HEX}`, 'malformed_signature'],
    ['a negative t', `t=-${NOW_S},v1=${HEX}`, 'malformed_signature'],
    ['a fractional t', `t=${NOW_S}.5,v1=${HEX}`, 'malformed_signature'],
    ['a t with a leading zero', `t=0${NOW_S},v1=${HEX}`, 'malformed_signature'],
    ['a t in exponent notation', `t=1.7e9,v1=${HEX}`, 'malformed_signature'],
    ['a huge t', `t=${'9'.repeat(30)},v1=${HEX}`, 'malformed_signature'],
    ['too many entries', `t=${NOW_S}${`,v1=${HEX}`.repeat(9)}`, 'malformed_signature'],
    ['two headers (an array)', [header(VOTE_BODY), header(VOTE_BODY)], 'malformed_signature'],
    ["two headers joined by node's ', '", `${header(VOTE_BODY)}, ${header(VOTE_BODY)}`, 'malformed_signature'],
  ];
  it.each(cases)('%s', (_name, signature, reason) => {
    const headers = signature === undefined ? {} : { 'x-topgg-signature': signature };
    expectRefused(verify({ headers }), reason);
  });

  it('accepts one header given as a one-element array', () => {
    expect(verify({ headers: { 'x-topgg-signature': [header(VOTE_BODY)] } }).ok).toBe(true);
  });
});

describe('verifyDelivery: signatures that do not match are 401', () => {
  it('refuses a valid signature over a different body', () => {
    const other = VOTE_BODY.replace('"weight":1', '"weight":2');
    expectRefused(verify({ rawBody: other, signature: header(VOTE_BODY) }), 'bad_signature');
  });

  it('refuses a signature made with a secret that is not configured', () => {
    expectRefused(verify({ signature: header(VOTE_BODY, 'whs_attacker') }), 'bad_signature');
  });

  it('refuses a signature moved to another timestamp', () => {
    expectRefused(verify({ signature: `t=${NOW_S + 1},v1=${HEX}` }), 'bad_signature');
  });

  it('refuses everything when no secret is configured, and never matches an empty secret', () => {
    expectRefused(verify({ secrets: [] }), 'missing_signature');
    expectRefused(verify({ secrets: [], signature: header(VOTE_BODY) }), 'bad_signature');
    expectRefused(verify({ secrets: [''], signature: header(VOTE_BODY, '') }), 'bad_signature');
  });

  it('refuses a stale and a future timestamp, after checking the signature', () => {
    expectRefused(verify({ signature: header(VOTE_BODY, SECRET, NOW_S - 301) }), 'stale');
    expectRefused(verify({ signature: header(VOTE_BODY, SECRET, NOW_S + 301) }), 'future');
    expectRefused(verify({ signature: header(VOTE_BODY, SECRET, 0) }), 'stale');
    // An old time under a forged signature says nothing about time.
    expectRefused(verify({ signature: `t=${NOW_S - 301},v1=${HEX}` }), 'bad_signature');
  });

  it('fails the window, not passes it, when the clock is not a number', () => {
    expect(verify({ signature: header(VOTE_BODY), now: Number.NaN }).ok).toBe(false);
  });

  it('falls back to 300 s for a negative or non-finite tolerance', () => {
    expect(verify({ signature: header(VOTE_BODY, SECRET, NOW_S - 200), toleranceSeconds: -1 }).ok).toBe(true);
    expectRefused(verify({ signature: header(VOTE_BODY, SECRET, NOW_S - 301), toleranceSeconds: Number.POSITIVE_INFINITY }), 'stale');
  });
});

describe('verifyDelivery: a validly signed body that is not an event is 400', () => {
  const signed = (body: string | Uint8Array) => verify({ rawBody: body, signature: header(body) });
  const cases: Array<[string, string | Uint8Array, VerifyFailure]> = [
    ['invalid JSON', '{"type":"vote.create",', 'malformed_body'],
    ['an empty body', '', 'malformed_body'],
    ['bytes that are not UTF-8', new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), 'malformed_body'],
    ['a JSON array', '[1,2]', 'malformed_body'],
    ['JSON null', 'null', 'malformed_body'],
    ['no data', '{"type":"vote.create"}', 'malformed_body'],
    ['data not an object', '{"type":"vote.create","data":[]}', 'malformed_body'],
    ['a type that is not a string', '{"type":1,"data":{}}', 'malformed_body'],
    ['an unknown event type', '{"type":"vote.delete","data":{}}', 'unknown_event'],
    ['a vote without an id', JSON.stringify({ ...VOTE_EVENT, data: { ...VOTE_EVENT.data, id: undefined } }), 'malformed_body'],
    ['a vote with a weight as text', JSON.stringify({ ...VOTE_EVENT, data: { ...VOTE_EVENT.data, weight: '1' } }), 'malformed_body'],
    ['a vote with a bad date', JSON.stringify({ ...VOTE_EVENT, data: { ...VOTE_EVENT.data, created_at: 'yesterday' } }), 'malformed_body'],
    ['a vote without its user', JSON.stringify({ ...VOTE_EVENT, data: { ...VOTE_EVENT.data, user: null } }), 'malformed_body'],
    ['a project without platform_id', JSON.stringify({ type: 'webhook.test', data: { project: { ...PROJECT, platform_id: '' }, user: USER } }), 'malformed_body'],
    ['an integration.create without its secret', JSON.stringify({ type: 'integration.create', data: { connection_id: 'c', project: PROJECT, user: USER } }), 'malformed_body'],
    ['an integration.delete without its connection', '{"type":"integration.delete","data":{}}', 'malformed_body'],
  ];
  it.each(cases)('%s', (_name, body, reason) => {
    expectRefused(signed(body), reason, 400);
  });

  it('does not parse the JSON of an unsigned body', () => {
    const spy = JSON.parse;
    let calls = 0;
    JSON.parse = ((...args: Parameters<typeof JSON.parse>) => {
      calls += 1;
      return spy(...args);
    }) as typeof JSON.parse;
    try {
      verify({ signature: header('{}') });
      verify({ signature: `t=${NOW_S},v1=${HEX.slice(2)}` });
      verify({ signature: header(VOTE_BODY, SECRET, NOW_S - 1000) });
    } finally {
      JSON.parse = spy;
    }
    expect(calls).toBe(0);
  });
});

describe('verifyDelivery: hostile JS callers', () => {
  it('never throws for inputs outside the types', () => {
    const weird: unknown[] = [
      { rawBody: 42, headers: { 'x-topgg-signature': header(VOTE_BODY) }, secrets: [SECRET], now: NOW },
      { rawBody: VOTE_BODY, headers: null, secrets: [SECRET], now: NOW },
      { rawBody: VOTE_BODY, headers: { 'x-topgg-signature': header(VOTE_BODY) }, secrets: undefined, now: NOW },
      { rawBody: VOTE_BODY, headers: { 'x-topgg-signature': header(VOTE_BODY) }, secrets: [42, null], now: NOW },
      { rawBody: VOTE_BODY, headers: { 'x-topgg-signature': 42 }, secrets: [SECRET], now: NOW },
      { rawBody: VOTE_BODY, headers: { 'x-topgg-signature': [42] }, secrets: [SECRET], now: NOW },
      {
        rawBody: VOTE_BODY,
        headers: Object.defineProperty({}, 'x-topgg-signature', { get: () => { throw new Error('boom'); }, enumerable: true }),
        secrets: [SECRET],
        now: NOW,
      },
    ];
    for (const input of weird) {
      const result = verifyDelivery(input as VerifyDeliveryOptions);
      expect(result.ok).toBe(false);
    }
  });
});
