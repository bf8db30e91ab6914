import type { StateStore } from './types.js';

/** A state store in memory only (tests, and embedded users who keep no state). */
export function createMemoryStore(): StateStore & { snapshot(): Record<string, unknown> } {
  const data = new Map<string, string>();
  return {
    async open() {},
    async get<T>(key: string) {
      const raw = data.get(key);
      return raw === undefined ? undefined : (JSON.parse(raw) as T);
    },
    async set(key, value) {
      data.set(key, JSON.stringify(value));
    },
    async delete(key) {
      data.delete(key);
    },
    async keys(prefix) {
      return [...data.keys()].filter((key) => key.startsWith(prefix));
    },
    async flush() {},
    async close() {},
    describe: () => 'memory (nothing survives a restart)',
    snapshot: () => Object.fromEntries([...data].map(([k, v]) => [k, JSON.parse(v)])),
  };
}
