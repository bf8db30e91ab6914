import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Integration tests open real sockets on 127.0.0.1; two cores, so two workers.
    maxWorkers: 2,
  },
});
