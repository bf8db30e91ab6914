import { defineConfig } from 'vitest/config';

/**
 * `npm test`: the unit and integration suites, the behaviour. The release checks (`*.check.ts`:
 * tsc, api-extractor, publint, attw, knip, dependency-cruiser, the packed package) are
 * `npm run check` (vitest.check.config.ts); the reliability suite is vitest.reliability.config.ts.
 */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // Finds redis-server, systemd-analyze and promtool, installs them with apt-get as root, else skips the
    // files that need them with one line saying how to fix it (test/setup/programs.ts).
    globalSetup: ['./test/setup/global-setup.ts'],
    // A test that arms a timer out of range (TimeoutOverflowWarning and kin) fails. The agent's
    // lazily loaded modules are imported first: require() cannot load the TypeScript sources.
    setupFiles: ['./test/setup/timer-warnings.ts', './test/setup/lazy-modules.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Integration tests open real sockets on 127.0.0.1 and mostly wait (on child processes, polls,
    // a fake disk): on two cores a third worker fills the waits. With three, a fresh clone's
    // `npm test` took 2 min 38 s (the build, then 149 s of vitest for 232 files).
    maxWorkers: 3,
  },
});
