import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { computeSignature, signDelivery, verifyDelivery, type VerifyResult } from '../../../src/webhooks/verify.js';
import { NOW, NOW_S, OLD_SECRET, SECRET, VOTE_BODY } from './fixtures.js';

const TOLERANCE = 300;
const SECRETS = [SECRET, OLD_SECRET];
const HEX_CHARS = '0123456789abcdef'.split('');

/**
 * The oracle, written from decisions.md and not from the verifier: a delivery may be accepted only
 * when the header holds `t` within the window and a `v1` equal to the HMAC of `<t>.<body>` under
 * a configured secret.
 */
function signedByConfiguredSecret(header: unknown, body: string | Uint8Array): boolean {
  if (typeof header !== 'string') return false;
  const t = /(?:^|,)t=(\d+)(?:,|$)/.exec(header)?.[1];
  if (t === undefined || Math.abs(Number(t) - NOW_S) > TOLERANCE) return false;
  const v1s = [...header.matchAll(/(?:^|,)v1=([0-9a-f]{64})(?=,|$)/g)].map((m) => m[1]);
  return SECRETS.some((secret) => v1s.includes(computeSignature(secret, Number(t), body)));
}

function run(body: string | Uint8Array, headers: Record<string, string | string[] | undefined>): VerifyResult {
  let result: VerifyResult | undefined;
  expect(() => (result = verifyDelivery({ rawBody: body, headers, secrets: SECRETS, now: NOW, toleranceSeconds: TOLERANCE }))).not.toThrow();
  return result!;
}

const hex = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...HEX_CHARS), minLength: min, maxLength: max });
/** Timestamps around the window's edges and far from it. */
const timestamp = fc.oneof(
  fc.integer({ min: NOW_S - 2 * TOLERANCE, max: NOW_S + 2 * TOLERANCE }),
  fc.constantFrom(0, NOW_S - TOLERANCE, NOW_S + TOLERANCE, NOW_S - TOLERANCE - 1, NOW_S + TOLERANCE + 1),
);
/** Near-valid headers: the right keys and separators, with wrong lengths, cases and spaces mixed in. */
const entry = fc.oneof(
  timestamp.map((t) => `t=${t}`),
  fc.string().map((s) => `t=${s}`),
  hex(60, 68).map((h) => `v1=${h}`),
  hex(64, 64).map((h) => `v1=${h.toUpperCase()}`),
  fc.string().map((s) => `v1=${s}`),
  fc.constantFrom('t=', 'v1=', '', ' ', 'v0=abc', 't', 'v1'),
  fc.string(),
);
const structuredHeader = fc.tuple(fc.array(entry, { maxLength: 6 }), fc.constantFrom(',', ', ', ';')).map(([parts, sep]) => parts.join(sep));
const headerValue = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), structuredHeader, fc.array(structuredHeader, { maxLength: 3 }));
const headers = fc.record(
  { 'x-topgg-signature': headerValue, 'x-topgg-trace': fc.string(), 'content-type': fc.string() },
  { requiredKeys: [] },
);
const body = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.uint8Array({ maxLength: 512 }), fc.json(), fc.constant(VOTE_BODY));

describe('verifyDelivery, property-based (fast-check)', () => {
  it('never throws and accepts only a configured secret\'s signature inside the window, for arbitrary headers and bodies', () => {
    fc.assert(
      fc.property(headers, body, (h, b) => {
        const result = run(b, h);
        if (result.ok) expect(signedByConfiguredSecret(h['x-topgg-signature'], b)).toBe(true);
        else expect([400, 401]).toContain(result.status);
      }),
      { numRuns: 3_000 },
    );
  });

  it('accepts a signDelivery delivery exactly when its secret is configured and t is inside the window', () => {
    const secret = fc.oneof(fc.constantFrom(SECRET, OLD_SECRET), fc.string({ minLength: 1 }).map((s) => `whs_${s}`));
    fc.assert(
      fc.property(secret, timestamp, fc.boolean(), (key, t, asBytes) => {
        const raw = asBytes ? Buffer.from(VOTE_BODY) : VOTE_BODY;
        const result = run(raw, signDelivery({ secret: key, rawBody: raw, timestampSeconds: t }));
        const configured = SECRETS.includes(key);
        const inside = Math.abs(t - NOW_S) <= TOLERANCE;
        expect(result.ok).toBe(configured && inside);
        if (!configured) expect(result).toMatchObject({ ok: false, reason: 'bad_signature', status: 401 });
        else if (!inside) expect(result).toMatchObject({ ok: false, reason: t < NOW_S ? 'stale' : 'future' });
      }),
      { numRuns: 2_000 },
    );
  });

  it('only a known event is accepted under a valid signature; anything else is 400, never an exception', () => {
    fc.assert(
      fc.property(body, (b) => {
        const result = run(b, signDelivery({ secret: SECRET, rawBody: b, timestampSeconds: NOW_S }));
        const known = b === VOTE_BODY || (typeof b !== 'string' && Buffer.from(b).toString() === VOTE_BODY);
        if (known) expect(result.ok).toBe(true);
        else if (!result.ok) expect(result.status).toBe(400);
      }),
      { numRuns: 2_000 },
    );
  });

  it('refuses a valid delivery with any one body byte changed', () => {
    const signed = signDelivery({ secret: SECRET, rawBody: VOTE_BODY, timestampSeconds: NOW_S });
    const bytes = Buffer.from(VOTE_BODY);
    for (let index = 0; index < bytes.length; index += 1) {
      for (const change of [0x01, 0x20, 0x80]) {
        const mutated = Buffer.from(bytes);
        mutated[index] = mutated[index]! ^ change;
        expect(run(mutated, signed)).toMatchObject({ ok: false, reason: 'bad_signature', status: 401 });
      }
    }
    // Dropping or adding a byte at either end is refused too.
    for (const mutated of [bytes.subarray(1), bytes.subarray(0, -1), Buffer.concat([bytes, Buffer.from(' ')]), Buffer.concat([Buffer.from(' '), bytes])]) {
      expect(run(mutated, signed)).toMatchObject({ ok: false, status: 401 });
    }
  });

  it('refuses a valid delivery with any one header character changed, dropped or doubled', () => {
    const signature = signDelivery({ secret: SECRET, rawBody: VOTE_BODY, timestampSeconds: NOW_S })['x-topgg-signature']!;
    const replacements = ['0', 'f', 'A', ' ', ',', '=', 'x'];
    for (let index = 0; index < signature.length; index += 1) {
      const variants = [
        ...replacements.filter((c) => c !== signature[index]).map((c) => signature.slice(0, index) + c + signature.slice(index + 1)),
        signature.slice(0, index) + signature.slice(index + 1),
        signature.slice(0, index) + signature[index] + signature.slice(index),
      ];
      for (const variant of variants) {
        const result = run(VOTE_BODY, { 'x-topgg-signature': variant });
        expect(result.ok, `accepted ${variant}`).toBe(false);
        if (!result.ok) expect(result.status).toBe(401);
      }
    }
  });

  it('refuses random byte mutations of a valid delivery (fast-check)', () => {
    const signed = signDelivery({ secret: OLD_SECRET, rawBody: VOTE_BODY, timestampSeconds: NOW_S });
    const bytes = Buffer.from(VOTE_BODY);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: bytes.length - 1 }), fc.integer({ min: 1, max: 255 }), (index, xor) => {
        const mutated = Buffer.from(bytes);
        mutated[index] = mutated[index]! ^ xor;
        expect(run(mutated, signed).ok).toBe(false);
      }),
      { numRuns: 2_000 },
    );
  });
});
