/**
 * The system programs some tests need, beside Node and npm. The global setup (global-setup.ts)
 * finds each one, installs its Debian package when it may, or else skips only the files listed
 * here with one line that says how to fix it. A new program is one more entry.
 */
export interface SystemProgram {
  /** The command's name on PATH, e.g. `redis-server`. */
  readonly name: string;
  /** The environment variable that names the program instead of PATH: an absolute path or a command name. */
  readonly envOverride: string;
  /** The Debian package that ships it (installed with apt-get when the tests run as root). */
  readonly debianPackage: string;
  /** The test files that need it, from the repository root; each skips its tests without it. */
  readonly testFiles: readonly string[];
}

export const SYSTEM_PROGRAMS = [
  {
    // A real Redis for the Redis store, the leader lease, shard reports, the ledger and the reward stream.
    name: 'redis-server',
    envOverride: 'REDIS_SERVER',
    debianPackage: 'redis-server',
    testFiles: [
      'test/integration/agent/push-cluster.test.ts',
      'test/integration/agent/redis-cluster.test.ts',
      'test/integration/agent/redis-outage.test.ts',
      'test/integration/agent/redis-service-down.test.ts',
      'test/integration/cli/redis-state.test.ts',
      'test/integration/cli/votes-reminders.test.ts',
      'test/integration/deploy/monitoring-metrics-redis.test.ts',
      'test/integration/doctor/doctor-redis.test.ts',
      'test/integration/leader/failover.test.ts',
      'test/integration/leader/redis-blip-stats.test.ts',
      'test/integration/leader/redis-lease.test.ts',
      'test/integration/leader/reminders-failover.test.ts',
      'test/integration/leader/restart-capabilities.test.ts',
      'test/integration/redis/cluster.test.ts',
      'test/integration/redis/confirm.test.ts',
      'test/integration/redis/frozen-server.test.ts',
      'test/integration/redis/connection.test.ts',
      'test/integration/redis/replica.test.ts',
      'test/integration/redis/sentinel.test.ts',
      'test/integration/stats/push-share.test.ts',
      'test/integration/stats/redis-shards.test.ts',
      'test/integration/store/redis-store.test.ts',
      'test/integration/votes/ledger-redis-claims.test.ts',
      'test/integration/votes/ledger-redis-holds.test.ts',
      'test/integration/votes/ledger-redis-queued.test.ts',
      'test/integration/votes/ledger-redis.test.ts',
      'test/integration/votes/reminders-fenced.test.ts',
      'test/integration/votes/reminders-redis.test.ts',
      'test/integration/votes/stream-kill.test.ts',
      'test/integration/votes/stream.test.ts',
      'test/integration/webhooks/secrets-redis.test.ts',
    ],
  },
  {
    // systemd's own check of deploy/listing-agent.service (verify, security); systemd need not run.
    name: 'systemd-analyze',
    envOverride: 'SYSTEMD_ANALYZE',
    debianPackage: 'systemd',
    testFiles: ['test/integration/deploy/systemd.test.ts'],
  },
  {
    // Prometheus's own check and unit tests of deploy/prometheus/ (the rules' shape is also
    // checked without it, in monitoring.test.ts).
    name: 'promtool',
    envOverride: 'PROMTOOL',
    debianPackage: 'prometheus',
    testFiles: ['test/integration/deploy/promtool.test.ts'],
  },
  {
    // A real browser for the status page: headless, driven by playwright-core (which downloads none).
    name: 'chromium',
    envOverride: 'CHROMIUM',
    debianPackage: 'chromium',
    testFiles: ['test/integration/status/browser.test.ts'],
  },
  {
    // Redis Sentinel (Debian ships it apart from redis-server): three of them watch a primary and
    // its replica for the connection through Sentinel, across a failover.
    name: 'redis-sentinel',
    envOverride: 'REDIS_SENTINEL',
    debianPackage: 'redis-sentinel',
    testFiles: ['test/integration/redis/sentinel.test.ts'],
  },
] as const satisfies readonly SystemProgram[];

/** `redis-server` | `systemd-analyze` | `promtool` | `chromium` | `redis-sentinel`: what a test file may ask `programPath()` for. */
export type ProgramName = (typeof SYSTEM_PROGRAMS)[number]['name'];

/**
 * The environment variable that stops the setup from ever running apt-get (`1`), even as root:
 * the programs missing are then skipped with their line, as for a user who is not root.
 */
export const NO_INSTALL_ENV = 'LISTING_AGENT_TEST_NO_INSTALL';
