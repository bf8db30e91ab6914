import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChurnMap, ChurnSet, RENEW_AFTER_DELETES } from '../../../src/runtime/churn-map.js';

/** Operations on a map of small keys: enough deletions to renew it many times over. */
const operations = fc.array(fc.tuple(fc.constantFrom('set', 'delete', 'get', 'has'), fc.integer({ min: 0, max: 40 }), fc.integer()), {
  minLength: RENEW_AFTER_DELETES * 3,
  maxLength: RENEW_AFTER_DELETES * 12,
});

describe('ChurnMap', () => {
  it('answers as a Map does through every renewal: values, size, insertion order', () => {
    fc.assert(
      fc.property(operations, (ops) => {
        const churn = new ChurnMap<number, number>();
        const plain = new Map<number, number>();
        for (const [op, key, value] of ops) {
          if (op === 'set') {
            expect(churn.set(key, value)).toBe(churn);
            plain.set(key, value);
          } else if (op === 'delete') expect(churn.delete(key)).toBe(plain.delete(key));
          else if (op === 'get') expect(churn.get(key)).toBe(plain.get(key));
          else expect(churn.has(key)).toBe(plain.has(key));
          expect(churn.size).toBe(plain.size);
        }
        expect([...churn]).toEqual([...plain]);
        expect([...churn.keys()]).toEqual([...plain.keys()]);
        expect([...churn.values()]).toEqual([...plain.values()]);
      }),
      { numRuns: 30 },
    );
  });

  it('keeps a large map whole across renewals (one copy per as many deletions as it has entries)', () => {
    const churn = new ChurnMap<string, number>();
    for (let i = 0; i < 5_000; i++) churn.set(`k${i}`, i);
    for (let i = 0; i < 4_000; i++) expect(churn.delete(`k${i}`)).toBe(true);
    expect(churn.delete('k0')).toBe(false);
    expect(churn.size).toBe(1_000);
    expect(churn.get('k4999')).toBe(4_999);
    expect([...churn.keys()][0]).toBe('k4000');
    churn.clear();
    expect(churn.size).toBe(0);
  });
});

describe('ChurnSet', () => {
  it('answers as a Set does through every renewal', () => {
    fc.assert(
      fc.property(operations, (ops) => {
        const churn = new ChurnSet<number>();
        const plain = new Set<number>();
        for (const [op, value] of ops) {
          if (op === 'set') {
            expect(churn.add(value)).toBe(churn);
            plain.add(value);
          } else if (op === 'delete') expect(churn.delete(value)).toBe(plain.delete(value));
          else expect(churn.has(value)).toBe(plain.has(value));
          expect(churn.size).toBe(plain.size);
        }
        expect([...churn]).toEqual([...plain]);
        churn.clear();
        expect([...churn]).toEqual([]);
      }),
      { numRuns: 30 },
    );
  });
});
