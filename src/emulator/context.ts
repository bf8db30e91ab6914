import type { EmulatorClock } from './clock.js';
import type { DeliveryService } from './deliveries.js';
import type { FaultQueue } from './faults.js';
import type { RateLimiter } from './rate-limit.js';
import type { EmulatorSettings } from './settings.js';
import type { EmulatorState } from './state.js';

/** Everything a route handler may use: state, clock, settings, and the services around them. */
export interface EmulatorContext {
  state: EmulatorState;
  clock: EmulatorClock;
  settings: EmulatorSettings;
  /** Signs project tokens and votes cursors. Random per emulator unless given. */
  signingKey: string;
  /** A new Snowflake-style ID. */
  nextId(): string;
  rateLimiter: RateLimiter;
  faults: FaultQueue;
  deliveries: DeliveryService;
  /** A fresh delivery service (after `reset` closed the previous one). */
  reopenDeliveries(): DeliveryService;
}
