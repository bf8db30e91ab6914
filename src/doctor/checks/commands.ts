import { commandsSourceFor } from '../../commands/configured-source.js';
import { normaliseCommands } from '../../commands/normalise.js';
import { COMMANDS_STATE_KEY, type LastCommandSync } from '../../commands/sync.js';
import type { CommandSource } from '../../commands/types.js';
import { fail, ok, skip, type CheckOutcome, type DoctorCheck, type DoctorDeps } from '../types.js';

const FROM_CLIENT =
  "commands.source is discord without discord.token: the commands come from the bot's discord.js Client, which only an agent embedded " +
    "in the bot can read; set discord.token to check them from here";

/** The source the agent would read, or undefined when only the bot's own client can answer. */
function sourceOf(deps: DoctorDeps): CommandSource | undefined {
  if (deps.commandSource) return deps.commandSource;
  const { config } = deps;
  if (config.commands.source === 'discord' && config.discord.token === undefined) return undefined;
  return commandsSourceFor(config, { cwd: deps.cwd, mode: 'daemon' });
}

/** How the commands compare with the last sync the state remembers. */
async function lastSyncNote(deps: DoctorDeps, hash: string): Promise<{ note: string; lastSyncedAt: string | null }> {
  let last: LastCommandSync | undefined;
  try {
    last = await (await deps.stateReader()).get<LastCommandSync>(COMMANDS_STATE_KEY);
  } catch {
    return { note: 'the last sync could not be read (see the state checks)', lastSyncedAt: null };
  }
  if (last === undefined) return { note: 'never synced yet: the agent sends them at its start', lastSyncedAt: null };
  const note =
    last.hash === hash
      ? `the same as synced at ${last.syncedAt}`
      : `changed since the sync at ${last.syncedAt}: the agent sends them at its next check`;
  return { note, lastSyncedAt: last.syncedAt };
}

/** `commands.source`: readable, and every command valid for the listing. */
export const commandsCheck: DoctorCheck = {
  name: 'commands.source',
  paths: ['commands', 'discord.applicationId'],
  async run(deps, signal): Promise<CheckOutcome> {
    if (!deps.config.commands.enabled) return skip('commands.enabled is false: the commands are not synced');
    const source = sourceOf(deps);
    if (source === undefined) return skip(FROM_CLIENT);
    const loaded = await source.load(signal);
    if (!loaded.ok) {
      const fix =
        deps.config.commands.source === 'file'
          ? 'make commands.file (LISTING_AGENT_COMMANDS_FILE) a readable JSON array of command objects'
          : 'fix what the reason names (discord.token, discord.applicationId)';
      return fail(`cannot read the commands from ${source.description}: ${loaded.reason}`, fix);
    }
    const normalised = normaliseCommands(loaded.commands);
    if (!normalised.ok) {
      const first = normalised.issues[0]!;
      const count = normalised.issues.length;
      return fail(
        `the commands ` +
          `from ${source.description} break the listing's ` +
          `rules: ${count} ${count === 1 ? 'problem' : 'problems'}, first ${first.path}: ${first.message}`,
        'fix each command named in details; nothing is synced until they are valid',
        { problems: normalised.issues.map((issue) => `${issue.path}: ${issue.message}`) },
      );
    }
    const { note, lastSyncedAt } = await lastSyncNote(deps, normalised.hash);
    const count = normalised.commands.length;
    return ok(`${source.description}: ${count} valid ${count === 1 ? 'command' : 'commands'}, ${note}`, {
      count,
      hash: normalised.hash,
      lastSyncedAt,
    });
  },
};
