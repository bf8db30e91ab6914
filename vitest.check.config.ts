import { defineConfig } from 'vitest/config';

/**
 * The release checks (`npm run check`, after the build and `npm run typecheck`): the layer rules
 * and the layer graph (one cruise of src/), the sizes, the rules of src/ for every runtime, knip,
 * the API reports, publint and attw, the docs' `ts` blocks and the packed package's types (tsc),
 * and the packed package run as a bot owner runs it (docs links, examples, bots, the CLI). Their
 * files end in `.check.ts`, so `npm test` (test/**\/*.test.ts, the behaviour suites) never runs
 * them. The package is packed once for every file (test/setup/packed-tarball.ts).
 */
export default defineConfig({
  test: {
    include: ['test/**/*.check.ts'],
    environment: 'node',
    globalSetup: ['./test/setup/packed-tarball.ts'],
    // A test that arms a timer out of range fails, as in npm test.
    setupFiles: ['./test/setup/timer-warnings.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Mostly tsc, api-extractor, knip and dependency-cruiser: CPU-bound, one file per core.
    maxWorkers: 2,
  },
});
