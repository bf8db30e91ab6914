import { expect } from 'vitest';
import { VoteHookError } from '../../src/votes/hooks/index.js';
import type { HookCallContext, Vote } from '../../src/votes/types.js';

const HOUR = 3_600_000;

/**
 * A vote of `userId` cast at `createdMs`, expiring 12 h later (the contract's vote lifetime), as
 * the pipeline hands it on: project 8, weight 1, no platform ID, polled. `extra` overrides fields.
 */
export function voteAt(userId: string, createdMs: number, extra: Partial<Vote> = {}): Vote {
  return {
    key: `${userId}:${createdMs}`,
    userId,
    platformId: null,
    projectId: '8',
    weight: 1,
    createdAt: new Date(createdMs).toISOString(),
    expiresAt: new Date(createdMs + 12 * HOUR).toISOString(),
    road: 'poll',
    ...extra,
  };
}

/** User 42's vote on project 8, cast 2025-01-01 12:00 Z, polled; `overrides` replace fields. */
export function sampleVote(overrides: Partial<Vote> = {}): Vote {
  return voteAt('42', Date.parse('2025-01-01T12:00:00.000Z'), { platformId: '210987654321098765', ...overrides });
}

/** The context a hook's `run` gets for `vote`: its key as the idempotency key. */
export function hookContext(vote: Vote, attempt = 1, signal: AbortSignal = new AbortController().signal): HookCallContext {
  return { idempotencyKey: vote.key, attempt, signal };
}

/** The VoteHookError `promise` rejects with; fails the test on anything else. */
export async function hookFailure(promise: Promise<unknown>): Promise<VoteHookError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(VoteHookError);
  return error as VoteHookError;
}
