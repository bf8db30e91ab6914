import { createRequire } from 'node:module';
import { errorMessage } from '../errors.js';

/*
 * What an agent loads only when its configuration uses it (issue 25: the weight inside a bot).
 * Importing the package loads the agent's class and little else; `createListingAgent` then loads,
 * synchronously, what that configuration needs: the schema that validates it (zod), the service
 * client, the state store, and each capability it enables; prom-client only when something serves
 * the metrics, Redis only with `state.redis`. A bot posting stats never loads the votes, webhooks
 * or commands code.
 *
 * Synchronously, because `createListingAgent` is synchronous and throws its configuration errors
 * at once: each module is loaded with `require()` of its ES module, which Node (20.19+, 22.12+),
 * Bun and Deno do (the package's CommonJS entry relies on the same). Where `require()` cannot load
 * them (the TypeScript sources under vitest), `preloadLazyModules()` imports them all first: the
 * test setup does (test/setup/lazy-modules.ts).
 */

const requireHere = createRequire(import.meta.url);

/** One module loaded on first use. */
export interface LazyModule<T> {
  /** The module, loaded now if it was not yet. */
  get(): T;
}

const preloads: (() => Promise<void>)[] = [];

/**
 * `specifier` (relative to this file) loaded on first use; `preload` is the same import, written
 * out so that vitest sees it. test/integration/cli/idle-modules.test.ts checks, on the
 * built package, that each is loaded only when used.
 */
function lazyModule<T>(specifier: string, preload: () => Promise<T>): LazyModule<T> {
  let loaded: T | undefined;
  preloads.push(async () => {
    const imported = await preload();
    // The same module both ways, or the specifier and the import name two files.
    if (loaded !== undefined && loaded !== imported) throw new Error(`${specifier}: require() and import() gave two different modules`);
    loaded = imported;
  });
  return {
    get(): T {
      if (loaded === undefined) {
        try {
          loaded = requireHere(specifier) as T;
        } catch (error) {
          throw new Error(
            `listing-agent could not ` +
              `load ${specifier} with require(): run it on Node 20.19+ or 22.12+, Bun or Deno 2 (where require() loads ES modules), and ` +
              `keep it out of bundles, as a package of its own (${errorMessage(error)})`,
            { cause: error },
          );
        }
      }
      return loaded;
    },
  };
}

/** The configuration's schema, with zod: every agent validates its configuration at construction. */
export const configParsing = lazyModule<typeof import('./parse-config.js')>('./parse-config.js', () => import('./parse-config.js'));
/** The config's secret values, scrubbed from the lines of the default stderr logger (no `logger` option). */
export const configSecrets = lazyModule<typeof import('../config/secrets.js')>(
  '../config/secrets.js',
  () => import('../config/secrets.js'),
);
/** The words of a configuration's problems (did-you-mean, what is missing): only for one that has some. */
export const configProblems = lazyModule<typeof import('../config/problems.js')>(
  '../config/problems.js',
  () => import('../config/problems.js'),
);
/** The service client's credential, transport and context (unless a client is passed); each group of calls below at its first use. */
export const serviceClient = lazyModule<typeof import('../api/client-context.js')>(
  '../api/client-context.js',
  () => import('../api/client-context.js'),
);
export const projectsApi = lazyModule<typeof import('../api/v1/projects.js')>(
  '../api/v1/projects.js',
  () => import('../api/v1/projects.js'),
);
export const commandsApi = lazyModule<typeof import('../api/v1/commands.js')>(
  '../api/v1/commands.js',
  () => import('../api/v1/commands.js'),
);
export const announcementsApi = lazyModule<typeof import('../api/v1/announcements.js')>(
  '../api/v1/announcements.js',
  () => import('../api/v1/announcements.js'),
);
export const metricsApi = lazyModule<typeof import('../api/v1/metrics.js')>('../api/v1/metrics.js', () => import('../api/v1/metrics.js'));
export const votesApi = lazyModule<typeof import('../api/v1/votes.js')>('../api/v1/votes.js', () => import('../api/v1/votes.js'));
export const webhooksApi = lazyModule<typeof import('../api/v1/webhooks.js')>(
  '../api/v1/webhooks.js',
  () => import('../api/v1/webhooks.js'),
);
export const integrationsApi = lazyModule<typeof import('../api/v1/integrations.js')>(
  '../api/v1/integrations.js',
  () => import('../api/v1/integrations.js'),
);
export const usersApi = lazyModule<typeof import('../api/v1/users.js')>('../api/v1/users.js', () => import('../api/v1/users.js'));
export const v0Api = lazyModule<typeof import('../api/v0/index.js')>('../api/v0/index.js', () => import('../api/v0/index.js'));
/** The file store (unless a store is passed or the state is in Redis). */
export const fileStore = lazyModule<typeof import('../store/file.js')>('../store/file.js', () => import('../store/file.js'));
/** The Redis side of an agent (`state.redis`). */
export const redisCluster = lazyModule<typeof import('./cluster.js')>('./cluster.js', () => import('./cluster.js'));
/** prom-client and the agent's metrics on a registry (health on, a `registry` passed, or `agent.registry` read). */
export const metricsRegistry = lazyModule<typeof import('../runtime/metrics.js')>(
  '../runtime/metrics.js',
  () => import('../runtime/metrics.js'),
);
/** The stats capability and its sources (`stats.enabled`). */
export const statsCapabilities = lazyModule<typeof import('./stats-capabilities.js')>(
  './stats-capabilities.js',
  () => import('./stats-capabilities.js'),
);
/** The count sources of a bot given as `discord` (each library told by its shape). */
export const botCountSources = lazyModule<typeof import('../stats/sources/detect.js')>(
  '../stats/sources/detect.js',
  () => import('../stats/sources/detect.js'),
);
/** The leader lease's gate, for the work only the leader does (`state.redis`). */
export const leaderGate = lazyModule<typeof import('../leader/gate.js')>('../leader/gate.js', () => import('../leader/gate.js'));
/** The stats capabilities that share counts through Redis (`state.redis` with the embedded, redis or push source). */
export const statsClusterCapabilities = lazyModule<typeof import('./stats-cluster-capabilities.js')>(
  './stats-cluster-capabilities.js',
  () => import('./stats-cluster-capabilities.js'),
);
/** The commands capability (`commands.enabled`). */
export const commandsCapabilities = lazyModule<typeof import('./commands-capabilities.js')>(
  './commands-capabilities.js',
  () => import('./commands-capabilities.js'),
);
/** The votes capability (`votes.enabled`, or `webhooks.enabled` alone: its pipeline records what the receiver takes). */
export const votesCapabilities = lazyModule<typeof import('./votes-capabilities.js')>(
  './votes-capabilities.js',
  () => import('./votes-capabilities.js'),
);
/** The webhook receiver (`webhooks.enabled`). */
export const webhooksCapabilities = lazyModule<typeof import('./webhooks-capabilities.js')>(
  './webhooks-capabilities.js',
  () => import('./webhooks-capabilities.js'),
);

/**
 * Imports every module above now, so that no agent needs `require()` afterwards: for the TypeScript
 * sources (vitest, which `require()` cannot load).
 */
export async function preloadLazyModules(): Promise<void> {
  await Promise.all(preloads.map((preload) => preload()));
}
