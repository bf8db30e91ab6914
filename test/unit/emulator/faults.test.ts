import { describe, expect, it } from 'vitest';
import { chaosSchema, createFaultQueue, faultSchema, seededRandom } from '../../../src/emulator/faults.js';
import { startTestEmulator } from '../../helpers/emulator.js';

const chaos = (input: unknown) => chaosSchema.parse(input);
const fault = (input: unknown) => faultSchema.parse(input);

/** The outcome of `n` requests to GET /api/v1/x, as kind names ('-' for none). */
function outcomes(queue: ReturnType<typeof createFaultQueue>, n: number, path = '/api/v1/x'): string[] {
  return Array.from({ length: n }, () => {
    const f = queue.take('GET', path);
    if (!f) return '-';
    return f.reset ? 'reset' : f.status !== undefined ? String(f.status) : 'delay';
  });
}

describe('fault queue: chaos (random faults from a seeded PRNG)', () => {
  it('is off by default: no queued fault, no fault', () => {
    const queue = createFaultQueue();
    expect(outcomes(queue, 50)).toEqual(Array(50).fill('-'));
    expect(queue.chaosStatus()).toEqual({ chaos: null, seen: 0, injected: 0, by_kind: {} });
  });

  it('strikes about `probability` of the requests, with every default kind, and counts them', () => {
    const queue = createFaultQueue();
    queue.setChaos(chaos({ probability: 0.3, seed: 42 }));
    const got = outcomes(queue, 4_000);
    const struck = got.filter((o) => o !== '-').length;
    expect(struck / 4_000).toBeGreaterThan(0.25);
    expect(struck / 4_000).toBeLessThan(0.35);
    const status = queue.chaosStatus();
    expect(status).toMatchObject({ seen: 4_000, injected: struck });
    expect(Object.keys(status.by_kind).sort()).toEqual(['429', '502', 'delay', 'reset']);
    expect(Object.values(status.by_kind).reduce((a, b) => a + b, 0)).toBe(struck);
    // The default kinds: a 429 carries Retry-After, a delay answers normally after 2 s.
    const sample = createFaultQueue();
    sample.setChaos(chaos({ probability: 1, seed: 1, kinds: [{ status: 429, retry_after: 3 }] }));
    expect(sample.take('POST', '/api/v1/y')).toMatchObject({ status: 429, retry_after: 3, chaos: true, count: 1, remaining: 0 });
  });

  it('replays the same faults for the same seed and request sequence, and others for another seed', () => {
    const run = (seed: number) => {
      const queue = createFaultQueue();
      queue.setChaos(chaos({ probability: 0.2, seed }));
      return outcomes(queue, 500);
    };
    expect(run(7)).toEqual(run(7));
    expect(run(7)).not.toEqual(run(8));
    // Setting chaos again restarts the sequence and the counters.
    const queue = createFaultQueue();
    queue.setChaos(chaos({ probability: 0.2, seed: 7 }));
    const first = outcomes(queue, 100);
    queue.setChaos(chaos({ probability: 0.2, seed: 7 }));
    expect(outcomes(queue, 100)).toEqual(first);
    expect(queue.chaosStatus().seen).toBe(100);
  });

  it('picks kinds by weight', () => {
    const queue = createFaultQueue();
    queue.setChaos(chaos({ probability: 1, seed: 3, kinds: [{ status: 502, weight: 9 }, { reset: true, weight: 1 }] }));
    outcomes(queue, 2_000);
    const { by_kind } = queue.chaosStatus();
    expect(by_kind['502']! / 2_000).toBeGreaterThan(0.85);
    expect(by_kind.reset! / 2_000).toBeGreaterThan(0.05);
  });

  it('matches method and path like a queued fault, and queued faults go first', () => {
    const queue = createFaultQueue();
    queue.setChaos(chaos({ probability: 1, seed: 5, method: 'post', path: '/api/v1/projects/*', kinds: [{ status: 503 }] }));
    expect(queue.take('GET', '/api/v1/projects/@me')).toBeUndefined();
    expect(queue.take('POST', '/api/v0/bots/stats')).toBeUndefined();
    expect(queue.take('POST', '/api/v1/projects/@me/metrics/batch')).toMatchObject({ status: 503 });
    queue.add(fault({ path: '/api/v1/projects/@me/metrics/batch', status: 429, retry_after: 9 }));
    expect(queue.take('POST', '/api/v1/projects/@me/metrics/batch')).toMatchObject({ status: 429, retry_after: 9 });
    expect(queue.take('POST', '/api/v1/projects/@me/metrics/batch')).toMatchObject({ status: 503 });
    expect(queue.chaosStatus()).toMatchObject({ seen: 2, injected: 2 });
  });

  it('turns off with clearChaos (counters kept) and with clear', () => {
    const queue = createFaultQueue();
    queue.setChaos(chaos({ probability: 1 }));
    outcomes(queue, 3);
    queue.clearChaos();
    expect(outcomes(queue, 3)).toEqual(['-', '-', '-']);
    expect(queue.chaosStatus()).toMatchObject({ chaos: null, seen: 3, injected: 3 });
    queue.setChaos(chaos({ probability: 1 }));
    queue.clear();
    expect(outcomes(queue, 3)).toEqual(['-', '-', '-']);
  });

  it('refuses settings that cannot work', () => {
    expect(chaosSchema.safeParse({ probability: 1.5 }).success).toBe(false);
    expect(chaosSchema.safeParse({}).success).toBe(false);
    expect(chaosSchema.safeParse({ probability: 0.1, kinds: [] }).success).toBe(false);
    expect(chaosSchema.safeParse({ probability: 0.1, kinds: [{ weight: 2 }] }).success).toBe(false);
    expect(chaosSchema.safeParse({ probability: 0.1, extra: true }).success).toBe(false);
  });

  it('seededRandom is deterministic and in [0, 1)', () => {
    const a = seededRandom(99);
    const b = seededRandom(99);
    const values = Array.from({ length: 1_000 }, () => a());
    expect(values).toEqual(Array.from({ length: 1_000 }, () => b()));
    expect(values.every((v) => v >= 0 && v < 1)).toBe(true);
  });
});

describe('admin API: /_emulator/faults/chaos', () => {
  it('sets, reads and clears chaos over HTTP; admin routes are never struck; DELETE /faults also ends it', async () => {
    const emu = await startTestEmulator();
    const set = await emu.adminCall('/faults/chaos', { json: { probability: 1, seed: 11, path: '/api/v1/*', kinds: [{ status: 502 }] } });
    expect(set.status).toBe(201);
    expect(set.body).toMatchObject({ chaos: { probability: 1, seed: 11, path: '/api/v1/*' }, seen: 0, injected: 0 });
    expect((await emu.v1('/projects/@me')).status).toBe(502);
    expect((await emu.v0('/bots/1/stats')).status).not.toBe(502);
    const read = await emu.adminCall('/faults/chaos');
    expect(read.body).toMatchObject({ seen: 1, injected: 1, by_kind: { '502': 1 } });
    expect(emu.admin.requests().filter((r) => r.fault)).toHaveLength(1);
    expect((await emu.adminCall('/faults/chaos', { method: 'DELETE' })).status).toBe(204);
    expect((await emu.v1('/projects/@me')).status).toBe(401);
    expect((await emu.adminCall('/faults/chaos', { json: { probability: 2 } })).status).toBe(400);
    await emu.adminCall('/faults/chaos', { json: { probability: 1 } });
    expect((await emu.adminCall('/faults', { method: 'DELETE' })).status).toBe(204);
    expect((await emu.adminCall('/faults/chaos')).body).toMatchObject({ chaos: null });
  });
});
