import type { ListingAgentConfig } from '../config/schema.js';
import { createCommandsCapability } from '../commands/capability.js';
import { commandsSourceFor } from '../commands/configured-source.js';
import type { ListingAgentOptions } from './options.js';
import type { Capability } from '../runtime/capability.js';

/** The commands capability (`commands.enabled`; loaded only then, agent/lazy.ts). */
export function commandsCapability(config: ListingAgentConfig, options: ListingAgentOptions): Capability {
  return createCommandsCapability(
    commandsSourceFor(config, {
      ...(options.commands !== undefined ? { commands: options.commands } : {}),
      ...(options.discord !== undefined ? { discord: options.discord } : {}),
      mode: options.mode ?? 'embedded',
    }),
  );
}
