import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DeadLetter, Vote } from '../../../src/votes/types.js';
import { voteAt } from '../../helpers/votes.js';

/** 2024-05-01T00:00:00Z: the votes' clock in these tests. */
export const T0 = Date.UTC(2024, 4, 1);
export const HOUR = 3_600_000;

/** A vote of user `user` cast `offsetMs` after {@link T0}, expiring 12 h later. */
export function makeVote(user: string | number, offsetMs = 0, extra: Partial<Vote> = {}): Vote {
  const userId = String(user);
  return voteAt(userId, T0 + offsetMs, { platformId: `1${userId.padStart(17, '0')}`, projectId: '803190510032756736', ...extra });
}

export function makeLetter(vote: Vote, hook: string, extra: Partial<DeadLetter> = {}): DeadLetter {
  return { key: vote.key, hook, vote, attempts: 3, error: 'exit code 1', failedAt: new Date(T0).toISOString(), ...extra };
}

const made: string[] = [];

/** A fresh directory under the OS temp dir; removed by {@link removeVoteDirs}. */
export async function voteDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'listing-agent-votes-'));
  made.push(dir);
  return dir;
}

export async function removeVoteDirs(): Promise<void> {
  await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
}
