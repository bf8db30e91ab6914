import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/agent-logger.js';
import { digest, pushReading, type PushState } from '../../../src/stats/sources/push-endpoint.js';

const T0 = Date.parse('2026-03-04T10:00:00Z');

function state(overrides: Partial<PushState> = {}): PushState {
  return {
    path: '/stats',
    staleAfterMs: 600_000,
    shardCount: undefined,
    now: () => T0,
    logger: silentLogger,
    keyDigest: digest('key'),
    reports: new Map([
      [0, { shard_id: 0, shard_count: 2, server_count: 40, receivedAt: T0 - 1_000 }],
      [1, { shard_id: 1, shard_count: 2, server_count: 60, receivedAt: T0 - 2_000 }],
    ]),
    listeners: new Set(),
    pushedShardCount: 2,
    listeningUrl: 'http://127.0.0.1:9466/stats',
    stopped: false,
    refusals: { refused: () => undefined, flush: () => undefined },
    ...overrides,
  };
}

describe('pushReading', () => {
  it('adds up the fresh reports of every expected shard', () => {
    expect(pushReading(state())).toEqual({ ready: true, serverCount: 100, shardCount: 2, shards: [40, 60] });
  });

  it('keeps a complete total ready while the endpoint is down, but says why nothing comes otherwise', () => {
    expect(pushReading(state({ listeningUrl: undefined, stopped: true })).ready).toBe(true);
    const waiting = pushReading(state({ listeningUrl: undefined, reports: new Map(), pushedShardCount: undefined }));
    expect(waiting).toEqual({ ready: false, reason: expect.stringMatching(/^the push endpoint is not listening \(start\(\) not called or failed\); no shard has reported yet/) });
    const stopped = pushReading(state({ listeningUrl: undefined, stopped: true, reports: new Map(), pushedShardCount: undefined }));
    expect(stopped.ready === false && stopped.reason).toContain('(stopped)');
  });

  it('waits for the configured shard count, not the pushed one', () => {
    const reading = pushReading(state({ shardCount: 3 }));
    expect(reading.ready).toBe(false);
    expect(reading.ready === false && reading.reason).toContain('stats.push.shardCount is 3');
  });
});
