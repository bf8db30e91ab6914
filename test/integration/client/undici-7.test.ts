import { createRequire } from 'node:module';
import { vi } from 'vitest';
import { undiciGuarantees } from './undici-majors.js';

/**
 * The package's HTTP guarantees on undici 7 (what a project without discord.js 14 installs): the
 * same suite as undici-6.test.ts, every `import('undici')` of src/ counted.
 */
const counted = vi.hoisted(() => ({ requests: 0 }));
vi.mock('undici', async (importOriginal) => {
  const real = await importOriginal<typeof import('undici')>();
  return { ...real, request: (...args: Parameters<typeof real.request>) => ((counted.requests += 1), real.request(...args)) };
});

const require = createRequire(import.meta.url);
undiciGuarantees(7, {
  version: (require('undici/package.json') as { version: string }).version,
  requests: () => counted.requests,
  otherAgent: () => new (require('undici-6') as typeof import('undici')).Agent(),
});
