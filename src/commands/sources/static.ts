import type { CommandSource } from '../types.js';

/**
 * Commands passed in code: Discord command objects, discord.js `SlashCommandBuilder`s and
 * `ContextMenuCommandBuilder`s, or plain objects (`normaliseCommands` turns each into the listing's
 * form). The array is copied, so later pushes to the caller's array do not change what is synced;
 * builders are read (`toJSON()`) at each sync, so a builder changed in place is seen.
 */
export function createStaticCommandsSource(commands: readonly unknown[]): CommandSource {
  const copy = [...commands];
  return {
    description: `commands passed in code (${copy.length})`,
    load: () => Promise.resolve({ ok: true, commands: [...copy] }),
  };
}
