import type { Capability, CapabilityContext } from '../runtime/capability.js';
import { ApiError } from '../api/errors.js';
import { knownProjectKind } from '../runtime/capability.js';
import { createSchedule, type Schedule } from '../runtime/scheduler.js';
import { syncCommands } from './sync.js';
import type { CommandsEvents, CommandSource, CommandSyncResult } from './types.js';
import { settleWithin } from '../runtime/settle.js';

/** The readiness component and log name. */
const COMMANDS_COMPONENT = 'commands';

/** The `commands` capability, with a sync on demand. */
export interface CommandsCapability extends Capability<CommandsEvents> {
  /** Syncs now (`force` sends even when unchanged); resolves with the result. */
  syncNow(options?: { force?: boolean }): Promise<CommandSyncResult>;
}

/**
 * Keeps the listing's command list equal to the bot's: a sync on start, on `commands.interval`
 * when set, and on demand; each sends a request only when the commands changed. Failures are
 * logged and emitted (`commandsSyncFailed`) and never stop the agent.
 */
export function createCommandsCapability(source: CommandSource): CommandsCapability {
  let context: CapabilityContext<CommandsEvents> | undefined;
  let schedule: Schedule | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let skipNotBot = false;

  async function run(reason: CommandSyncResult['reason'], force = false): Promise<CommandSyncResult> {
    const ctx = context;
    if (!ctx) throw new Error('the commands capability is not started');
    try {
      if (!skipNotBot) {
        // The agent's context has the project when the agent fetched it; `@me` is asked only without it.
        const project = knownProjectKind(ctx) ?? (await ctx.client.projects.get());
        if (project.platform !== 'discord' || project.type !== 'bot') {
          skipNotBot = true;
          ctx.logger.warn(
            { platform: project.platform, type: project.type },
            'commands sync skipped: the listing takes commands only for chat-platform bots, and this project is not one',
          );
        }
      }
      if (skipNotBot) {
        ctx.readiness.set(COMMANDS_COMPONENT, true, 'skipped: the project is not a chat-platform bot');
        const diff = { added: [], removed: [], changed: [], same: true };
        const skipped: CommandSyncResult = { count: 0, skipped: true, hash: '', diff, reason };
        ctx.emit('commandsSynced', skipped);
        return skipped;
      }
      const result = await syncCommands(
        { source, client: ctx.client, store: ctx.store, logger: ctx.logger, metrics: ctx.metrics, now: ctx.now },
        { reason, force },
      );
      const said = result.skipped ? `unchanged (${result.count} commands)` : `synced ${result.count} commands`;
      ctx.readiness.set(COMMANDS_COMPONENT, true, said);
      ctx.emit('commandsSynced', result);
      return result;
    } catch (error) {
      const err = error instanceof Error ? error : new Error(String(error));
      ctx.metrics.commandSyncs.inc({ result: 'error' });
      const refused = error instanceof ApiError && (error.status === 401 || error.status === 403);
      ctx.logger[refused ? 'error' : 'warn']({ err: err.message }, 'commands sync failed');
      ctx.readiness.set(COMMANDS_COMPONENT, false, `last sync failed: ${err.message}`);
      ctx.emit('commandsSyncFailed', { error: err, reason });
      ctx.reportError(err);
      throw err;
    }
  }

  /** Runs one sync at a time: a sync on demand waits for one in progress. */
  function queue(reason: CommandSyncResult['reason'], force = false): Promise<CommandSyncResult> {
    const next = running.catch(() => undefined).then(() => run(reason, force));
    running = next.catch(() => undefined);
    return next;
  }

  return {
    name: COMMANDS_COMPONENT,
    async start(ctx) {
      context = ctx;
      ctx.readiness.set(COMMANDS_COMPONENT, false, `first sync from ${source.description}`);
      // The first sync runs in the background: a slow Discord must not hold back the agent's start.
      void queue('start').catch(() => undefined);
      const interval = ctx.config.commands.interval;
      if (interval !== undefined) {
        const tick = () => queue('schedule').then(() => undefined, () => undefined);
        schedule = createSchedule({ name: 'commands', intervalMs: interval, onTick: tick });
        schedule.start();
      }
    },
    async stop(deadline) {
      schedule?.stop();
      schedule = undefined;
      await settleWithin(running, deadline - (context?.now() ?? Date.now()));
      context = undefined;
    },
    syncNow: (options = {}) => queue('demand', options.force === true),
  };
}
