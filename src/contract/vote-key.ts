/**
 * The key of a vote: `<user_id>:<created_at as epoch milliseconds>` (decisions.md, "One vote, two
 * roads"). A vote that comes by the votes cursor (no vote ID) and by a signed delivery has the same
 * key on both roads, so reward hooks see it once. `createdAt` is the epoch ms, or a timestamp that
 * `Date.parse` reads.
 */
export function voteKey(userId: string, createdAt: string | number): string {
  const createdMs = typeof createdAt === 'number' ? createdAt : Date.parse(createdAt);
  return `${userId}:${createdMs}`;
}
