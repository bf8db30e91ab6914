import type { DeadLetter, LedgerEntry, Vote } from './types.js';

/**
 * The Lua scripts of the Redis vote ledger, and the parsing of their replies (pure). Each script
 * runs atomically in Redis: that is what makes two agents recording the same vote, or sweeping
 * the same orphan, end with exactly one winner.
 *
 * Every script declares every key it touches in `KEYS` (none is built inside a script), so that
 * they run on a Redis Cluster, where every key of the agent shares one hash tag. The first four:
 *
 * - `KEYS[1]` `votes:pending` (hash: vote key → agent ID running its hooks)
 * - `KEYS[2]` `votes:dead` (hash: `<vote key>|<hook>` → `<seq> <forget at> <letter JSON>`)
 * - `KEYS[3]` `votes:index` (sorted set: vote key → forget-at ms, `+inf` while pending or lettered)
 * - `KEYS[4]` `votes:seq` (counter: the order of records and letters)
 *
 * and after them the records the call is about, `<prefix>vote:<key>`, each a hash: `v` the vote
 * JSON, `s` its sequence number, `d` hooks done (JSON array), `dl` hooks dead-lettered and not yet
 * taken (JSON array), `c` `1` once complete, `cb` the agent whose hooks completed it (absent when
 * an agent marked it finished without running it), `f` when it may be forgotten (expiresAt + keepKeysFor).
 * What a sweep must first find (the pending entries, the dead letters, the records due) is read by
 * a command or {@link READ_HASH} first; the script that acts checks again that it is still so.
 *
 * A record has no TTL while pending or lettered (its hooks are owed, however old the vote); once
 * finished it gets `PEXPIRE` until its forget-at (by the agent's clock), so Redis bounds the
 * ledger even if no agent compacts.
 *
 * Each script ends with {@link COUNTS}: `{pending, dead letters, keys}`, the sizes `stats()` shows.
 */

const HELPERS = `
local function list(raw)
  if not raw then return {} end
  local ok, value = pcall(cjson.decode, raw)
  if ok and type(value) == 'table' then return value end
  return {}
end
local function contains(items, item)
  for _, value in ipairs(items) do if value == item then return true end end
  return false
end
local function without(items, item)
  local kept = {}
  for _, value in ipairs(items) do if value ~= item then kept[#kept + 1] = value end end
  return kept
end
-- cjson writes an empty table as {}: the records keep [] for an empty list.
local function encode(items)
  if #items == 0 then return '[]' end
  return cjson.encode(items)
end
local function counts()
  return {redis.call('HLEN', KEYS[1]), redis.call('HLEN', KEYS[2]), redis.call('ZCARD', KEYS[3])}
end
`;

/** A hash as a flat list, `field, value, ...` (RESP2 and RESP3 alike): what a sweep looks at first. */
export const READ_HASH = `return redis.call('HGETALL', KEYS[1])`;

/**
 * `ARGV[1]` the agent ID, then `key, vote JSON, forget-at` per vote, its record `KEYS[4 + n]`.
 * Creates each record that does not exist (a key twice in one batch: once), files it as pending
 * under this agent. Replies `{new keys, counts}`: the cross-agent dedupe point.
 */
export const RECORD_PENDING = `${HELPERS}
local fresh = {}
for n = 1, (#ARGV - 1) / 3 do
  local i = 2 + (n - 1) * 3
  local key = ARGV[i]
  local record = KEYS[4 + n]
  if redis.call('EXISTS', record) == 0 then
    local seq = redis.call('INCR', KEYS[4])
    redis.call('HSET', record, 'v', ARGV[i + 1], 's', seq, 'd', '[]', 'dl', '[]', 'c', '0', 'f', ARGV[i + 2])
    redis.call('HSET', KEYS[1], key, ARGV[1])
    redis.call('ZADD', KEYS[3], '+inf', key)
    fresh[#fresh + 1] = key
  end
end
-- A write even when nothing is new: WAIT then confirms what the replication stream holds up to
-- now (another agent's record of the same vote among it), not this connection's last write alone.
if #fresh == 0 then redis.call('INCRBY', KEYS[4], 0) end
return {fresh, counts()}
`;

/**
 * `ARGV[1]` now (epoch ms, the agent's clock), `ARGV[2]` keepKeysFor (ms), then `op, key, hook,
 * payload` per write, its record `KEYS[4 + n]`, applied in order: `h` hook done, `c` complete
 * (`hook` the agent whose hooks completed it, or ''), `d` dead letter (payload `<forget at>
 * <letter JSON>`). A vote finishing after its forget-at (a late one, caught up from the cursor)
 * is kept keepKeysFor from now, so the retries that follow it are still recognised. Every write
 * is idempotent, so a batch whose reply was lost (a timeout) may safely be sent again.
 */
export const APPLY_WRITES = `${HELPERS}
local now = tonumber(ARGV[1])
for n = 1, (#ARGV - 2) / 4 do
  local i = 3 + (n - 1) * 4
  local op, key, hook, payload = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local record = KEYS[4 + n]
  local exists = redis.call('EXISTS', record) == 1
  if op == 'h' then
    if exists then
      local done = list(redis.call('HGET', record, 'd'))
      if not contains(done, hook) then
        done[#done + 1] = hook
        redis.call('HSET', record, 'd', encode(done))
      end
    end
  elseif op == 'c' then
    redis.call('HDEL', KEYS[1], key)
    if exists then
      redis.call('HSET', record, 'c', '1')
      if hook ~= '' then redis.call('HSET', record, 'cb', hook) end
      if #list(redis.call('HGET', record, 'dl')) == 0 then
        local forgetAt = math.max(tonumber(redis.call('HGET', record, 'f')) or 0, now + tonumber(ARGV[2]))
        redis.call('ZADD', KEYS[3], forgetAt, key)
        redis.call('PEXPIRE', record, math.max(1, math.floor(forgetAt - now)))
      end
    end
  elseif op == 'd' then
    local seq = redis.call('INCR', KEYS[4])
    redis.call('HSET', KEYS[2], key .. '|' .. hook, seq .. ' ' .. payload)
    if exists then
      local lettered = list(redis.call('HGET', record, 'dl'))
      if not contains(lettered, hook) then
        lettered[#lettered + 1] = hook
        redis.call('HSET', record, 'dl', encode(lettered))
      end
      redis.call('PERSIST', record)
      redis.call('ZADD', KEYS[3], '+inf', key)
    end
  end
end
-- Always a write, so that WAIT confirms this batch even when each write was there already (a retry).
redis.call('INCRBY', KEYS[4], 0)
return counts()
`;

/**
 * `ARGV[1]` the agent ID, then `key, owner` per pending entry a sweep found, its record
 * `KEYS[3 + 2n]` and its owner's heartbeat `KEYS[4 + 2n]`. An entry still pending under that
 * owner is included when the owner is this agent, and claimed (it is this agent's from now on)
 * when the owner's heartbeat is gone. Replies `{{key, vote, seq, done, lettered}..., counts}` with
 * the claimed and included entries. A pending entry whose record is gone (nothing to run) is dropped.
 */
export const CLAIM_PENDING = `${HELPERS}
local out = {}
for n = 1, (#ARGV - 1) / 2 do
  local key, owner = ARGV[2 * n], ARGV[2 * n + 1]
  local mine = owner == ARGV[1]
  if redis.call('HGET', KEYS[1], key) == owner and (mine or redis.call('EXISTS', KEYS[4 + 2 * n]) == 0) then
    local record = redis.call('HMGET', KEYS[3 + 2 * n], 'v', 's', 'd', 'dl')
    if record[1] then
      if not mine then redis.call('HSET', KEYS[1], key, ARGV[1]) end
      out[#out + 1] = {key, record[1], record[2] or '0', record[3] or '[]', record[4] or '[]'}
    else
      redis.call('HDEL', KEYS[1], key)
    end
  end
end
return {out, counts()}
`;

/**
 * `ARGV[1]` the agent ID, then `field, key, hook` per dead letter to take, its record
 * `KEYS[4 + n]`. Removes each letter still there and makes its vote pending again under this
 * agent for that hook (re-creating a record that is gone from the letter). Replies `{letters taken
 * (stored form), counts}`.
 */
export const TAKE_DEAD_LETTERS = `${HELPERS}
local taken = {}
for n = 1, (#ARGV - 1) / 3 do
  local i = 2 + (n - 1) * 3
  local field, key, hook = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local value = redis.call('HGET', KEYS[2], field)
  if value then
    redis.call('HDEL', KEYS[2], field)
    taken[#taken + 1] = value
    local record = KEYS[4 + n]
    if redis.call('EXISTS', record) == 1 then
      redis.call('HSET', record, 'dl', encode(without(list(redis.call('HGET', record, 'dl')), hook)), 'c', '0')
    else
      -- Only a flushed or hand-edited Redis loses a lettered record: rebuild it, no hook done.
      local first = string.find(value, ' ', 1, true)
      local second = string.find(value, ' ', first + 1, true)
      local letter = cjson.decode(string.sub(value, second + 1))
      local seq = redis.call('INCR', KEYS[4])
      local forget = string.sub(value, first + 1, second - 1)
      redis.call('HSET', record, 'v', cjson.encode(letter.vote), 's', seq, 'd', '[]', 'dl', '[]', 'c', '0', 'f', forget)
    end
    redis.call('PERSIST', record)
    redis.call('ZADD', KEYS[3], '+inf', key)
    redis.call('HSET', KEYS[1], key, ARGV[1])
  end
end
return {taken, counts()}
`;

/**
 * `ARGV[1]` now (epoch ms), `ARGV[2]` how many due keys follow, then those keys (found by
 * `ZRANGEBYSCORE` of the index), then pending keys to check; each key's record follows the four
 * in `KEYS`, in the same order. Forgets finished records still due before `now` (a record found
 * pending or lettered again goes back to `+inf`); drops the pending entries checked whose record
 * is gone. Replies the counts.
 */
export const COMPACT = `${HELPERS}
local now, due = tonumber(ARGV[1]), tonumber(ARGV[2])
for n = 1, due do
  local key, record = ARGV[2 + n], KEYS[4 + n]
  local score = tonumber(redis.call('ZSCORE', KEYS[3], key))
  if score and score < now then
    local state = redis.call('HMGET', record, 'c', 'dl')
    if state[1] == '1' and #list(state[2]) == 0 or not state[1] then
      redis.call('DEL', record)
      redis.call('ZREM', KEYS[3], key)
    else
      redis.call('ZADD', KEYS[3], '+inf', key)
    end
  end
end
for n = due + 1, #ARGV - 2 do
  local key = ARGV[2 + n]
  if redis.call('EXISTS', KEYS[4 + n]) == 0 then redis.call('HDEL', KEYS[1], key) end
end
return counts()
`;

/**
 * `ARGV[1]` the vote key, `ARGV[2]` the agent ID, `ARGV[3]` its heartbeat's nonce, `ARGV[4]` the
 * lease (ms); `KEYS[1]` `votes:pending`, `KEYS[2]` the vote's record, `KEYS[3]` this agent's
 * heartbeat. Replies 1 when this agent may retry a hook of the vote: it is pending under this
 * agent (and then the heartbeat is renewed in the same step, so no sweep can claim the vote
 * between this answer and the call), or it is neither pending nor completed by another agent's
 * hooks (a record Redis lost, or one an agent marked finished from its memory without running it:
 * run it rather than lose it). Replies 0 when another agent holds it (a sweep took it over) or
 * completed it.
 */
export const HOLDS = `
local owner = redis.call('HGET', KEYS[1], ARGV[1])
if owner == ARGV[2] then
  redis.call('SET', KEYS[3], ARGV[3], 'PX', ARGV[4])
  return 1
end
if owner then return 0 end
local state = redis.call('HMGET', KEYS[2], 'c', 'cb')
if state[1] == '1' and state[2] and state[2] ~= ARGV[2] then return 0 end
return 1
`;

/** Deletes this agent's heartbeat if it is still this instance's (`ARGV[1]` its nonce). */
export const RELEASE_HEARTBEAT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** The sizes every script replies with. */
export interface LedgerCounts {
  pending: number;
  deadLetters: number;
  keys: number;
}

/** `{pending, dead, keys}` as a script replies it. */
export function parseCounts(reply: unknown): LedgerCounts {
  const [pending, deadLetters, keys] = (Array.isArray(reply) ? reply : []).map(Number);
  return { pending: pending ?? 0, deadLetters: deadLetters ?? 0, keys: keys ?? 0 };
}

/** A JSON array of hook names as a record keeps it (`{}` from cjson counts as empty). */
function parseList(raw: unknown): string[] {
  if (typeof raw !== 'string') return [];
  try {
    const value: unknown = JSON.parse(raw);
    return Array.isArray(value) ? value.map(String) : [];
  } catch {
    return [];
  }
}

/** Entries of a {@link CLAIM_PENDING} reply, in recording order. */
export function parseEntries(rows: unknown): LedgerEntry[] {
  const parsed: Array<{ seq: number; entry: LedgerEntry }> = [];
  for (const row of Array.isArray(rows) ? rows : []) {
    const [, vote, seq, done, lettered] = row as [string, string, string, string, string];
    const entry: LedgerEntry = { vote: JSON.parse(vote) as Vote, done: parseList(done), complete: false };
    entry.deadLettered = parseList(lettered);
    parsed.push({ seq: Number(seq), entry });
  }
  return parsed.sort((a, b) => a.seq - b.seq).map((item) => item.entry);
}

/** How a dead letter is stored: `<seq> <forget at> <letter JSON>` (`<seq> ` is added by the script). */
export function letterPayload(letter: DeadLetter, forgetAt: number): string {
  return `${forgetAt} ${JSON.stringify(letter)}`;
}

/** Dead letters in their stored form, oldest first. */
export function parseLetters(values: unknown): DeadLetter[] {
  const parsed: Array<{ seq: number; letter: DeadLetter }> = [];
  for (const value of Array.isArray(values) ? values : []) {
    const text = String(value);
    const first = text.indexOf(' ');
    const second = text.indexOf(' ', first + 1);
    parsed.push({ seq: Number(text.slice(0, first)), letter: JSON.parse(text.slice(second + 1)) as DeadLetter });
  }
  return parsed.sort((a, b) => a.seq - b.seq).map((item) => item.letter);
}
