import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createAdmin, type EmulatorAdmin } from './admin.js';
import { createClock } from './clock.js';
import type { EmulatorContext } from './context.js';
import { createDeliveryService } from './deliveries.js';
import { createFaultQueue } from './faults.js';
import { createSnowflakeGenerator } from './ids.js';
import { createRateLimiter } from './rate-limit.js';
import { createRouter } from './router.js';
import { adminRoutes } from './routes/admin.js';
import { authorizeRoutes, oauthRoutes } from './routes/oauth.js';
import { v0Routes } from './routes/v0.js';
import { v1IntegrationRoutes } from './routes/v1-integrations.js';
import { v1ProjectListRoutes } from './routes/v1-project-list.js';
import { v1ProjectRoutes } from './routes/v1-projects.js';
import { v1UserRoutes } from './routes/v1-users.js';
import { v1VoteRoutes } from './routes/v1-votes.js';
import { v1WebhookRoutes } from './routes/v1-webhooks.js';
import type { EmulatorSeed } from './seed.js';
import { createEmulatorServer } from './server.js';
import { DEFAULT_SETTINGS, type EmulatorSettings } from './settings.js';
import { createEmptyState } from './state.js';

/** Options of {@link startEmulator}. */
export interface StartEmulatorOptions {
  /** Port to listen on. Default 0 (any free port). */
  port?: number;
  /** Address to listen on. Default `127.0.0.1`. */
  host?: string;
  /** Fixture to load. Default: none (an empty emulator); the CLI loads `DEFAULT_SEED`. */
  seed?: EmulatorSeed;
  /** Base clock in epoch milliseconds. Default `Date.now`. */
  now?: () => number;
  /** Key that signs project tokens and votes cursors. Default: random per start. */
  signingKey?: string;
  /** Tunable numbers; defaults are the contract's. */
  settings?: Partial<EmulatorSettings>;
  /** Called with unexpected errors (the request gets a 500). Default: ignored. */
  onError?: (error: unknown) => void;
}

/** The emulator's addresses. */
export interface EmulatorUrls {
  /** `http://host:port` */
  origin: string;
  /** v1 base URL (`{origin}/api/v1`). */
  v1: string;
  /** v0 base URL (`{origin}/api`). */
  v0: string;
  /** Base of the authorization page (`{origin}`; the page is `/oauth2/authorize`). */
  auth: string;
  /** The admin API (`{origin}/_emulator`). */
  admin: string;
}

/** A running emulator. */
export interface RunningEmulator {
  urls: EmulatorUrls;
  admin: EmulatorAdmin;
  /** Stops listening, cancels deliveries and closes every connection. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** A running emulator with its internals, for this package's own code and white-box tests. */
export interface EmulatorWithContext extends RunningEmulator {
  context: EmulatorContext;
}

/** Starts a local listing-service emulator over node:http. */
export async function startEmulator(options: StartEmulatorOptions = {}): Promise<EmulatorWithContext> {
  const clock = createClock(options.now);
  const state = createEmptyState();
  const settings: EmulatorSettings = { ...DEFAULT_SETTINGS, ...options.settings };
  const emu: EmulatorContext = {
    state,
    clock,
    settings,
    signingKey: options.signingKey ?? randomBytes(32).toString('base64url'),
    nextId: createSnowflakeGenerator(clock.now),
    rateLimiter: createRateLimiter(clock.now),
    faults: createFaultQueue(),
    deliveries: createDeliveryService(state, clock, settings),
    reopenDeliveries: () => createDeliveryService(state, clock, settings),
  };
  const admin = createAdmin(emu);
  if (options.seed) admin.reset(options.seed);

  let urls: EmulatorUrls | undefined;
  const server = createEmulatorServer(
    emu,
    {
      v1: createRouter([
        ...v1ProjectListRoutes,
        ...v1ProjectRoutes, ...v1VoteRoutes, ...v1WebhookRoutes, ...v1IntegrationRoutes, ...v1UserRoutes]),
      v0: createRouter(v0Routes),
      oauth: createRouter(oauthRoutes),
      authorize: createRouter(authorizeRoutes),
      admin: createRouter(adminRoutes(admin)),
    },
    {
      index: () => ({ status: 200, body: urls }),
      ...(options.onError ? { onError: options.onError } : {}),
    },
  );

  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  urls = { origin, v1: `${origin}/api/v1`, v0: `${origin}/api`, auth: origin, admin: `${origin}/_emulator` };

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= new Promise<void>((resolve) => {
      emu.deliveries.close();
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closing;
  };
  return { urls, admin, context: emu, close, [Symbol.asyncDispose]: close };
}

export type { EmulatorAdmin, AdminGrant, AdminProject, AdminUser, AdminVote } from './admin.js';
export type { EmulatorSettings } from './settings.js';
export { DEFAULT_SETTINGS } from './settings.js';
export type { EmulatorSeed } from './seed.js';
export { DEFAULT_SEED, seedSchema } from './seed.js';
