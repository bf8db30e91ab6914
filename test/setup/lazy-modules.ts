import { expect } from 'vitest';
import { preloadLazyModules } from '../../src/agent/lazy.js';

/**
 * A vitest setup file: the modules an agent loads on first use (src/agent/lazy.ts) are imported
 * now. The built package loads them with `require()`, which cannot load the TypeScript sources
 * vitest runs; test/integration/cli/idle-modules.test.ts and the runtime matrix check that path on
 * the built package.
 *
 * Not for the files under test/unit/: they test pure cores and never make an agent, and importing
 * every module an agent may load costs each of them about 0.7 s (some 70 s of a whole run on two
 * cores). A unit test that makes an agent fails with "could not load ... with require()": it
 * belongs under test/integration/.
 */
const testPath = expect.getState().testPath ?? '';
if (!/[\\/]test[\\/]unit[\\/]/.test(testPath)) await preloadLazyModules();
