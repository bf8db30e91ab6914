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

/** The key and user {@link isKeyOfUser} checked last, and its answer. */
let checkedKey = '';
let checkedUser = '';
let checkedAnswer = false;

/**
 * Whether `key` is `<userId>:<something>`, as {@link voteKey} spells a key of that user. It
 * remembers the last pair: the file vote ledger (writing a vote's line) and the vote reminders
 * riding it ask of the same vote one right after the other, and comparing a key costs tens of ns
 * (a key is a cons string, read through its parts).
 */
export function isKeyOfUser(key: string, userId: string): boolean {
  if (key === checkedKey && userId === checkedUser) return checkedAnswer;
  checkedKey = key;
  checkedUser = userId;
  // `lastIndexOf(userId, 0)` compares at 0 only, as `startsWith` does, in half its time.
  checkedAnswer = key.length > userId.length + 1 && key.charCodeAt(userId.length) === 58 && key.lastIndexOf(userId, 0) === 0;
  return checkedAnswer;
}

/** The key {@link lastVoteKeyInto} read last, whether it was one, and its parts. */
let lastKey = '';
let lastWasParts = false;
const lastParts = new Float64Array(3);

/**
 * Reads a key spelled as {@link voteKey} spells it for a numeric user ID,
 * `<user ID>:<created ms>` with both parts canonical decimal numbers (no leading zero; the ID 1
 * to 24 digits, the ms 1 to 15), into `out[at]` (the ID's leading digits, at most 15), `out[at + 1]`
 * (its last 9) and `out[at + 2]` (the ms); false for any other key (`out` untouched).
 *
 * It remembers the last key it read: on the vote path the file vote ledger's dedupe keys and the
 * vote reminders riding it read a recorded vote's key one right after the other, and the second
 * read is a comparison with the same string object, not a parse. (Typed arrays: numbers beyond
 * small integers, with no heap number each.)
 */
export function lastVoteKeyInto(key: string, out: Float64Array, at: number): boolean {
  if (key !== lastKey) {
    lastKey = key;
    lastWasParts = parseKeyParts(key);
  }
  if (!lastWasParts) return false;
  out[at] = lastParts[0]!;
  out[at + 1] = lastParts[1]!;
  out[at + 2] = lastParts[2]!;
  return true;
}

function parseKeyParts(key: string): boolean {
  const colon = key.indexOf(':');
  const msDigits = key.length - colon - 1;
  if (colon < 1 || colon > 24 || msDigits < 1 || msDigits > 15) return false;
  if ((colon > 1 && key.charCodeAt(0) === 48) || (msDigits > 1 && key.charCodeAt(colon + 1) === 48)) return false;
  if (!splitDecimalInto(key, 0, colon, lastParts, 0)) return false;
  // The ms: at most 15 digits, below 2^53.
  let bad = 0;
  let ms = 0;
  for (let i = colon + 1; i < key.length; i++) {
    const digit = key.charCodeAt(i) - 48;
    bad |= digit | (9 - digit);
    ms = ms * 10 + digit;
  }
  if (bad < 0) return false;
  lastParts[2] = ms;
  return true;
}

/**
 * The text of an ID that {@link splitDecimalInto} split into `high` (all but the last 9 digits)
 * and `low` (the last 9). `toFixed`, not `String`: numbers' strings from V8's cache are made in
 * the old generation.
 */
export function joinDecimal(high: number, low: number): string {
  return high === 0 ? low.toFixed(0) : high.toFixed(0) + (low + 1e9).toFixed(0).slice(1);
}

/**
 * The decimal digits `text[start..end)` (at most 24) as two numbers: all but the last 9 (at most
 * 15 digits, exact in a double) into `out[at]`, the last 9 into `out[at + 1]`; false (`out`
 * untouched) when one is not a digit. The shape of an ID the vote path keeps as numbers (a key's
 * user, `splitId` of the reminders' table).
 */
export function splitDecimalInto(text: string, start: number, end: number, out: Float64Array, at: number): boolean {
  const cut = end - start > 9 ? end - 9 : start;
  // A digit d is 0–9 exactly when neither d nor 9 - d is negative: one sign test after the loops,
  // not two branches per character (an ID is nearly always all digits).
  let bad = 0;
  let high = 0;
  for (let i = start; i < cut; i++) {
    const digit = text.charCodeAt(i) - 48;
    bad |= digit | (9 - digit);
    high = high * 10 + digit;
  }
  let low = 0;
  for (let i = cut; i < end; i++) {
    const digit = text.charCodeAt(i) - 48;
    bad |= digit | (9 - digit);
    low = low * 10 + digit;
  }
  if (bad < 0) return false;
  out[at] = high;
  out[at + 1] = low;
  return true;
}
