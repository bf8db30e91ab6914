/**
 * `listing-agent/emulator`: a faithful local emulator of the listing service (v1, v0, OAuth 2.1,
 * signed webhook deliveries, injected faults) for tests and demos, on 127.0.0.1 and a free port.
 *
 * ```ts
 * import { startEmulator } from 'listing-agent/emulator';
 * await using emulator = await startEmulator();
 * ```
 *
 * @packageDocumentation
 */
export { startEmulator, DEFAULT_SETTINGS, DEFAULT_SEED, seedSchema } from '../emulator/index.js';
export type {
  StartEmulatorOptions,
  RunningEmulator,
  EmulatorUrls,
  EmulatorAdmin,
  AdminGrant,
  AdminProject,
  AdminUser,
  AdminVote,
  EmulatorSettings,
  EmulatorSeed,
} from '../emulator/index.js';
