import { StoreError } from './errors.js';
import type { StateStore } from './types.js';

/**
 * A state store in memory only (tests, and embedded users who keep no state). It behaves like the
 * file store where callers can tell: values are copied in and out as JSON, and writes after
 * `close()` are refused (until `open()` again).
 */
export function createMemoryStore(): StateStore & { snapshot(): Record<string, unknown> } {
  const data = new Map<string, string>();
  let closed = false;
  const requireOpen = () => {
    if (closed) throw new StoreError('cannot write the memory store: the store is closed', 'memory');
  };
  return {
    async open() {
      closed = false;
    },
    async get<T>(key: string) {
      const raw = data.get(key);
      return raw === undefined ? undefined : (JSON.parse(raw) as T);
    },
    async set(key, value) {
      requireOpen();
      const raw = JSON.stringify(value);
      if (raw === undefined)
        throw new TypeError(`cannot store ${typeof value} under "${key}": values are JSON; use delete() to remove a key`);
      data.set(key, raw);
    },
    async delete(key) {
      requireOpen();
      data.delete(key);
    },
    async keys(prefix) {
      return [...data.keys()].filter((key) => key.startsWith(prefix));
    },
    async flush() {},
    async close() {
      closed = true;
    },
    describe: () => 'memory (nothing survives a restart)',
    snapshot: () => Object.fromEntries([...data].map(([k, v]) => [k, JSON.parse(v)])),
  };
}
