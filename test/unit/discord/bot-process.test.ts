import { Client, GatewayIntentBits } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { botProcessOf } from '../../../src/discord/shapes.js';

/*
 * Which process of a sharded bot a Client runs in, as `state.lock` records it: what lets an agent
 * that finds a sibling shard's lock say to create the agent in the manager's process instead.
 */

/** A real discord.js Client with `shard` or `cluster` set as a ShardingManager or discord-hybrid-sharding would. */
function clientWith(extra: Record<string, unknown>): Client {
  return Object.assign(new Client({ intents: [GatewayIntentBits.Guilds] }), extra);
}

describe('botProcessOf', () => {
  it("names a ShardingManager's shard process and a hybrid cluster's", () => {
    expect(botProcessOf(clientWith({ shard: { ids: [1], count: 2 } }))).toBe('shard 1 of 2');
    expect(botProcessOf(clientWith({ shard: { ids: [2, 3], count: 4 } }))).toBe('shards 2, 3 of 4');
    expect(botProcessOf(clientWith({ cluster: { id: 0, count: 3, ids: [0, 1] } }))).toBe('cluster 0 of 3');
  });

  it('is undefined for a Client on its own, anything that is not a Client, and a getter that throws', () => {
    expect(botProcessOf(new Client({ intents: [GatewayIntentBits.Guilds] }))).toBeUndefined();
    expect(botProcessOf({ shard: { ids: [0], count: 2 } })).toBeUndefined();
    expect(botProcessOf(undefined)).toBeUndefined();
    const throwing = clientWith({});
    Object.defineProperty(throwing, 'shard', { get: () => ({ get ids(): number[] { throw new Error('not yet') }, count: 2 }) });
    expect(botProcessOf(throwing)).toBeUndefined();
  });
});
