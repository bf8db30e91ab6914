import type { ListingAgentConfig } from '../config/schema.js';
import type { FieldIssue } from '../errors.js';
import { createCommandsCapability } from '../commands/capability.js';
import { commandsSourceFor, commandsSourceProblem } from '../commands/configured-source.js';
import type { ListingAgentOptions, StartInputs } from './options.js';
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

/** What the commands capability of `config` cannot run with: no source to read the commands from. */
export function commandsProblems(config: ListingAgentConfig, inputs: StartInputs): FieldIssue[] {
  const problem = commandsSourceProblem(config, {
    mode: inputs.mode,
    // Only whether commands came in code matters here, not which.
    ...(inputs.commands ? { commands: [] } : {}),
    ...(inputs.discord !== undefined ? { discord: inputs.discord } : {}),
  });
  return problem ? [problem] : [];
}
