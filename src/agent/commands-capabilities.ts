import type { ListingAgentConfig } from '../config/schema.js';
import { createCommandsCapability } from '../commands/capability.js';
import { commandsSourceFor } from '../commands/configured-source.js';
import { whileLeading } from '../leader/gate.js';
import type { AgentCluster } from './cluster.js';
import type { ListingAgentOptions } from './options.js';
import type { Capability } from '../runtime/capability.js';

/** The commands capability (`commands.enabled`; loaded only then, agent/lazy.ts): with a `cluster`, on the leader only. */
export function commandsCapability(config: ListingAgentConfig, options: ListingAgentOptions, cluster: AgentCluster | undefined): Capability {
  const capability = createCommandsCapability(
    commandsSourceFor(config, {
      ...(options.commands !== undefined ? { commands: options.commands } : {}),
      ...(options.discord !== undefined ? { discord: options.discord } : {}),
    }),
  );
  return cluster ? whileLeading(capability, cluster.leadership) : capability;
}
