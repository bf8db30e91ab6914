import type { CountSource } from '../stats/source.js';

/**
 * A pretend bot for the demo: a few shards whose server counts drift up and down, the way a real
 * bot's do. Pure: time and randomness come in, so tests can drive it.
 */
export interface SimulatedBot {
  readonly name: string;
  /** Server count per shard. */
  shards(): number[];
  /** The sum of the shards. */
  total(): number;
  /** Moves every shard by a small random step (joins outnumber leaves a little). */
  drift(): void;
}

/** The simulated bot as a count source: always ready, the true totals of its shards. */
export function simulatedBotSource(bot: SimulatedBot): CountSource {
  return {
    description: `simulated bot (${bot.shards().length} shards)`,
    read: async () => ({ ready: true, serverCount: bot.total(), shardCount: bot.shards().length, shards: bot.shards() }),
  };
}

/** Options of {@link createSimulatedBot}. */
export interface SimulatedBotOptions {
  /** Default `Demo Bot`. */
  name?: string;
  /** Number of shards. Default 3. */
  shardCount?: number;
  /** Servers per shard at the start. Default 400. */
  serversPerShard?: number;
  /** Randomness in [0, 1). Default `Math.random`. */
  random?: () => number;
}

/** Creates a simulated bot. */
export function createSimulatedBot(options: SimulatedBotOptions = {}): SimulatedBot {
  const random = options.random ?? Math.random;
  const perShard = options.serversPerShard ?? 400;
  // Shards start a little apart, as real ones do, and never below zero.
  const counts = Array.from({ length: options.shardCount ?? 3 }, (_, i) => Math.max(0, perShard + ((i * 7) % 11) - 5));
  return {
    name: options.name ?? 'Demo Bot',
    shards: () => [...counts],
    total: () => counts.reduce((sum, n) => sum + n, 0),
    drift() {
      for (let i = 0; i < counts.length; i += 1) {
        // A step in [-2, +3]: the bot grows slowly, as listed bots that people vote for do.
        counts[i] = Math.max(0, counts[i]! + Math.floor(random() * 6) - 2);
      }
    },
  };
}
