/**
 * The key of a vote: `<user_id>:<created_at as epoch milliseconds>` (decisions.md, "One vote, two
 * roads"). A vote that comes by the votes cursor (no vote ID) and by a signed delivery has the same
 * key on both roads, so reward hooks see it once.
 */
export function voteKey(userId: string, createdAt: string | number): string {
  const ms = typeof createdAt === 'number' ? createdAt : Date.parse(createdAt);
  return `${userId}:${msText(ms)}`;
}

/**
 * `String(ms)`, for a whole number of ms without V8's number-to-string cache: the strings that
 * cache keeps are made in the old generation, where one per vote is garbage only a full
 * collection frees (measured: 32 bytes of old space per conversion; `toFixed` makes its string
 * young). The same text as `String(ms)` for every safe integer (every time `Date.parse` gives); `String` for the rest.
 */
const msText = (ms: number): string => (Number.isSafeInteger(ms) ? ms.toFixed(0) : String(ms));
