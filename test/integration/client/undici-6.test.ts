import { createRequire } from 'node:module';
import { vi } from 'vitest';
import { undiciGuarantees } from './undici-majors.js';

/**
 * The package's HTTP guarantees on undici 6 (the floor of our range, `undici-6` in devDependencies),
 * the major discord.js 14 brings and npm keeps for us in a bot: every `import('undici')` of src/
 * gets undici 6 here, its `request` counted.
 */
const counted = vi.hoisted(() => ({ requests: 0 }));
vi.mock('undici', async () => {
  const real = await import('undici-6');
  return { ...real, request: (...args: Parameters<typeof real.request>) => ((counted.requests += 1), real.request(...args)) };
});

const require = createRequire(import.meta.url);
undiciGuarantees(6, {
  version: (require('undici-6/package.json') as { version: string }).version,
  requests: () => counted.requests,
  // Required, not imported: vi.mock above turns every import of `undici` into undici 6.
  otherAgent: () => new (require('undici') as typeof import('undici')).Agent(),
});
