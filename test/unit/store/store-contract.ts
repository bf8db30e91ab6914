import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../../src/store/errors.js';
import type { StateStore } from '../../../src/store/types.js';

/** A store under test and how to throw away what it left behind. */
export interface ContractSubject {
  store: StateStore;
  cleanup?: () => Promise<void>;
}

/**
 * The behaviour every `StateStore` shares (memory, file, and later Redis). `makeStore` returns a
 * fresh, empty, not yet opened store; the contract opens and closes it.
 */
export function describeStoreContract(name: string, makeStore: () => Promise<ContractSubject>): void {
  describe(`StateStore contract: ${name}`, () => {
    let subject: ContractSubject;
    let store: StateStore;

    beforeEach(async () => {
      subject = await makeStore();
      store = subject.store;
      await store.open();
    });

    afterEach(async () => {
      await store.close().catch(() => undefined);
      await subject.cleanup?.();
    });

    it('returns undefined for a key never set', async () => {
      expect(await store.get('nothing:here')).toBeUndefined();
    });

    it('round-trips JSON values of every kind, durable or not', async () => {
      const values: Record<string, unknown> = {
        'v:string': 'héllo "world" \u2028 ✓',
        'v:number': 12.5,
        'v:zero': 0,
        'v:bool': false,
        'v:null': null,
        'v:array': [1, 'two', { three: 3 }],
        'v:object': { nested: { deep: [true, null] }, empty: {} },
        'v:empty-string': '',
      };
      for (const [key, value] of Object.entries(values)) await store.set(key, value);
      await store.set('v:durable', { cursor: 'abc' }, { durable: true });
      for (const [key, value] of Object.entries(values)) expect(await store.get(key)).toEqual(value);
      expect(await store.get('v:durable')).toEqual({ cursor: 'abc' });
    });

    it('overwrites a key and deletes it (deleting a missing key is fine)', async () => {
      await store.set('k', 1);
      await store.set('k', 2, { durable: true });
      expect(await store.get('k')).toBe(2);
      await store.delete('k');
      expect(await store.get('k')).toBeUndefined();
      await store.delete('k', { durable: true });
      await store.delete('never-set');
    });

    it('hands out copies: mutating what went in or came out changes nothing stored', async () => {
      const value = { list: [1, 2], inner: { a: 1 } };
      await store.set('copy', value);
      value.list.push(3);
      value.inner.a = 99;
      const first = await store.get<{ list: number[]; inner: { a: number } }>('copy');
      expect(first).toEqual({ list: [1, 2], inner: { a: 1 } });
      first!.list.push(4);
      first!.inner.a = 42;
      expect(await store.get('copy')).toEqual({ list: [1, 2], inner: { a: 1 } });
    });

    it('lists keys by prefix', async () => {
      await store.set('votes:pending:1', 1);
      await store.set('votes:pending:2', 2);
      await store.set('votes:cursor', 'c');
      await store.set('commands:hash', 'h');
      expect((await store.keys('votes:pending:')).sort()).toEqual(['votes:pending:1', 'votes:pending:2']);
      expect((await store.keys('votes:')).length).toBe(3);
      expect((await store.keys('')).length).toBe(4);
      expect(await store.keys('nope:')).toEqual([]);
    });

    it('takes many concurrent durable writes and flushes', async () => {
      await Promise.all(Array.from({ length: 50 }, (_, i) => store.set(`c:${i}`, { i }, { durable: true })));
      await store.flush();
      expect((await store.keys('c:')).length).toBe(50);
      expect(await store.get('c:49')).toEqual({ i: 49 });
    });

    it('refuses a value that is not JSON (undefined)', async () => {
      await expect(store.set('u', undefined)).rejects.toThrow(TypeError);
    });

    it('describes itself in one line', () => {
      expect(store.describe()).toMatch(/^\S.*$/);
    });

    it('refuses writes after close with a StoreError', async () => {
      await store.set('before', 1);
      await store.close();
      await expect(store.set('after', 1)).rejects.toThrow(StoreError);
      await expect(store.set('after', 1, { durable: true })).rejects.toThrow(/closed/);
      await expect(store.delete('before')).rejects.toThrow(StoreError);
      await store.close(); // twice is fine
    });
  });
}
