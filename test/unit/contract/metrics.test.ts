import { describe, expect, it } from 'vitest';
import { INT32_MAX, metricsKind, validateMetrics } from '../../../src/contract/metrics.js';

const problemsOf = (payload: unknown, kind: Parameters<typeof validateMetrics>[1]) => {
  const result = validateMetrics(payload, kind);
  return result.ok ? [] : result.problems;
};

describe('metricsKind', () => {
  it('maps platform and type', () => {
    expect(metricsKind('discord', 'bot')).toBe('discord/bot');
    expect(metricsKind('minecraft', 'game_server')).toBe('minecraft/game_server');
    expect(metricsKind('roblox', 'bot')).toBeUndefined();
  });
});

describe('validateMetrics', () => {
  it('accepts each platform payload', () => {
    expect(validateMetrics({ server_count: 10, shard_count: null }, 'discord/bot')).toEqual({
      ok: true,
      value: { server_count: 10, shard_count: null },
    });
    expect(validateMetrics({ member_count: 5, online_count: 5 }, 'discord/server').ok).toBe(true);
    expect(validateMetrics({ player_count: 0 }, 'roblox/game').ok).toBe(true);
    expect(validateMetrics({ tick_rate: 19.5, uptime_seconds: 2 ** 40, players_online: 3, players_max: 3 }, 'minecraft/game_server').ok).toBe(true);
    expect(validateMetrics({ server_count: INT32_MAX }, 'discord/bot').ok).toBe(true);
  });

  it('rejects an empty or non-object payload', () => {
    expect(problemsOf({}, 'discord/bot')).toEqual([{ path: '', message: 'is empty: give at least one of server_count, shard_count' }]);
    expect(problemsOf([], 'discord/bot')[0]?.path).toBe('');
    expect(problemsOf(null, 'discord/bot')[0]?.path).toBe('');
  });

  it('rejects negative, fractional, too large and non-number counts', () => {
    expect(problemsOf({ server_count: -1 }, 'discord/bot')).toContainEqual({ path: 'server_count', message: 'must be an integer 0 or more (got -1)' });
    expect(problemsOf({ server_count: 1.5 }, 'discord/bot')[0]?.path).toBe('server_count');
    expect(problemsOf({ server_count: INT32_MAX + 1 }, 'discord/bot')[0]?.message).toContain('int32');
    expect(problemsOf({ shard_count: '3' }, 'discord/bot')[0]?.path).toBe('shard_count');
    expect(problemsOf({ uptime_seconds: -5 }, 'minecraft/game_server')[0]?.path).toBe('uptime_seconds');
    expect(problemsOf({ tick_rate: 'fast' }, 'minecraft/game_server')[0]?.path).toBe('tick_rate');
  });

  it('rejects unknown fields and fields of another platform', () => {
    expect(problemsOf({ server_count: 1, guilds: 2 }, 'discord/bot')).toEqual([
      { path: 'guilds', message: 'is not a metrics field (allowed for discord/bot: server_count, shard_count)' },
    ]);
    expect(problemsOf({ server_count: 1, member_count: 2 }, 'discord/bot')[0]?.path).toBe('member_count');
    expect(problemsOf({ player_count: 1, players_online: 1 }, 'roblox/game')[0]?.path).toBe('players_online');
  });

  it('needs at least one non-null field of the platform', () => {
    expect(problemsOf({ server_count: null, shard_count: null }, 'discord/bot')[0]?.message).toContain('at least one');
    expect(problemsOf({ player_count: null }, 'roblox/game')).toEqual([
      { path: 'player_count', message: 'is required (a non-null value) for roblox/game' },
    ]);
    expect(problemsOf({ member_count: null }, 'discord/server')[0]?.path).toBe('');
  });

  it('keeps online counts at or below their maximum', () => {
    expect(problemsOf({ member_count: 5, online_count: 6 }, 'discord/server')).toEqual([
      { path: 'online_count', message: 'must not exceed member_count (6 > 5)' },
    ]);
    expect(validateMetrics({ online_count: 6 }, 'discord/server').ok).toBe(true);
    expect(problemsOf({ players_online: 11, players_max: 10 }, 'minecraft/game_server')[0]?.path).toBe('players_online');
  });
});
