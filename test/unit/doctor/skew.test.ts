import { describe, expect, it } from 'vitest';
import { classifySkew, describeSkew, measureSkew } from '../../../src/doctor/skew.js';

const T0 = Date.parse('2026-11-25T12:00:00.000Z');

describe('clock skew against the service', () => {
  it('measures against the middle of the request, with half the round trip and the header rounding as uncertainty', () => {
    // Sent at T0, answered 200 ms later; the service said 12:00:30 (so it was between :30.000 and :31.000).
    const measure = measureSkew('Wed, 25 Nov 2026 12:00:30 GMT', T0, T0 + 200);
    expect(measure).toEqual({ skewMs: 30_500 - 100, uncertaintyMs: 600 });
  });

  it('has nothing to say without a usable Date header', () => {
    expect(measureSkew(undefined, T0, T0)).toBeUndefined();
    expect(measureSkew('yesterday-ish', T0, T0)).toBeUndefined();
  });

  it('is ok up to 30 s, a warn up to 300 s, a fail beyond, in both directions', () => {
    const at = (skewMs: number) => classifySkew({ skewMs, uncertaintyMs: 0 });
    expect(at(0)).toBe('ok');
    expect(at(30_000)).toBe('ok');
    expect(at(30_001)).toBe('warn');
    expect(at(-45_000)).toBe('warn');
    expect(at(300_000)).toBe('warn');
    expect(at(300_001)).toBe('fail');
    expect(at(-400_000)).toBe('fail');
  });

  it('gives the uncertainty to the clock: only a skew beyond a threshold for certain is reported', () => {
    expect(classifySkew({ skewMs: 30_400, uncertaintyMs: 600 })).toBe('ok');
    expect(classifySkew({ skewMs: 301_000, uncertaintyMs: 2_000 })).toBe('warn');
  });

  it('says which way the clock is off', () => {
    expect(describeSkew({ skewMs: 42_300, uncertaintyMs: 500 })).toBe('this machine is 42 s behind the service');
    expect(describeSkew({ skewMs: -42_300, uncertaintyMs: 500 })).toBe('this machine is 42 s ahead of the service');
    expect(describeSkew({ skewMs: 300, uncertaintyMs: 500 })).toBe('this machine is in step with the service (within a second)');
  });
});
