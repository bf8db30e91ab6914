import type { Vote } from '../../src/votes/types.js';

/** Vote `n` of the reward stream tests: distinct keys, expiring 12 hours from now. */
export function testVote(n: number): Vote {
  const createdAt = new Date(Date.UTC(2025, 0, 1, 0, 0, n)).toISOString();
  return {
    key: `user-${n}:${Date.parse(createdAt)}`,
    userId: `user-${n}`,
    platformId: `10000${n}`,
    projectId: 'project-1',
    weight: 1,
    createdAt,
    expiresAt: new Date(Date.now() + 12 * 3_600_000).toISOString(),
    road: 'poll',
  };
}
