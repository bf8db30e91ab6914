import { preloadLazyModules } from '../../src/agent/lazy.js';

/**
 * A vitest setup file: the modules an agent loads on first use (src/agent/lazy.ts) are imported
 * now. The built package loads them with `require()`, which cannot load the TypeScript sources
 * vitest runs; test/integration/cli/idle-modules.test.ts and the runtime matrix check that path on
 * the built package.
 */
await preloadLazyModules();
