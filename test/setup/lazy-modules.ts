import { expect } from 'vitest';
import { preloadLazyModules } from '../../src/agent/lazy.js';

/**
 * A vitest setup file: the modules an agent loads on first use (src/agent/lazy.ts) are imported
 * now. The built package loads them with `require()`, which cannot load the TypeScript sources
 * vitest runs; test/integration/cli/idle-modules.test.ts and the runtime matrix check that path on
 * the built package.
 *
 * Not for the folders whose files never make an agent in this process (test/unit/: pure cores;
 * the architecture, docs, runtimes and setup checks; the emulator, deploy files, client and http
 * layers): importing every module an agent may load costs each file about 0.5–0.7 s, some 70 s of
 * a whole run on two cores. A test there that makes an agent fails with "could not load ... with
 * require()": it belongs in a folder that preloads.
 */
const testPath = expect.getState().testPath ?? '';
const needsNoAgent = /[\\/]test[\\/](unit|architecture|docs|runtimes|setup)[\\/]|[\\/]test[\\/]integration[\\/](emulator|deploy|client|http)[\\/]/;
if (!needsNoAgent.test(testPath)) await preloadLazyModules();
