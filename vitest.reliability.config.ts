import { defineConfig } from 'vitest/config';

/**
 * The reliability suite (`npm run test:reliability`): fault soak, crash rounds, hostile input and
 * the secrets scan, against the built daemon (`dist/`). Its files end in `.reliability.ts`, so the
 * regular `npm test` (test/**\/*.test.ts) never runs them. `RELIABILITY_SHORT=1` is the short form
 * `.ci/run` uses; `RELIABILITY_SEED=<n>` replays a run (every summary line prints its seed).
 */
export default defineConfig({
  test: {
    include: ['test/reliability/**/*.reliability.ts'],
    environment: 'node',
    // Finds redis-server (lease churn needs one), installing it as root, else skips that file.
    globalSetup: ['./test/setup/global-setup.ts'],
    // One file at a time: each test drives a daemon hard, and the machine's two cores are shared.
    fileParallelism: false,
    maxWorkers: 1,
    testTimeout: 600_000,
    hookTimeout: 60_000,
    // The summary lines are the point of the suite: show them even when everything passes.
    silent: false,
  },
});
