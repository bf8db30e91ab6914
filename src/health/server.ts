import type { Registry } from 'prom-client';
import type { AgentLogger } from '../agent/logger.js';
import type { Readiness } from '../agent/readiness.js';

/** Options of {@link createHealthServer}. */
export interface HealthServerOptions {
  listen: { host: string; port: number };
  readiness: Readiness;
  registry: Registry;
  logger: AgentLogger;
}

/** The health server: `/healthz`, `/readyz`, `/metrics`. */
export interface HealthServer {
  /** Listens; resolves with the base URL. Throws a `ListenError` naming the address and the fix. */
  start(): Promise<string>;
  stop(): Promise<void>;
}

/** Creates the health server (not listening until `start()`). */
export function createHealthServer(options: HealthServerOptions): HealthServer {
  void options;
  throw new Error('createHealthServer: being written');
}
