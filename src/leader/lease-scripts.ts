/**
 * The leader lease's Lua scripts (redis-lease.ts runs them): KEYS[1] the lease, KEYS[2] the
 * fencing counter, under one hash tag. Each reads and writes in one step, so that no other agent's
 * command comes between the check and the write.
 */

/**
 * Takes the lease when it is free: a new fencing token (INCR) and the key set with the lease as
 * its TTL, in one script so no token is handed out without a lease, nor a lease without a token.
 * ARGV[3] is the value this agent held last (`<agent id>|<token>`): while the counter is still at
 * that token, no other was handed out since, and the lease (its own, or expired) is taken back
 * under the same token, as a renewal keeps it: nothing new to confirm. ARGV[4] '0': a new token
 * could not be confirmed now (no replica has this connection's writes), so none is handed out.
 * Answers `{1, value, token, 1 if taken back}`, `{0, holder value, PTTL}` when another agent
 * holds it, or `{2}` when it is free but no new token may be handed out.
 */
export const ACQUIRE = `
local current = redis.call('GET', KEYS[1])
if current and current ~= ARGV[3] then
  return {0, current, redis.call('PTTL', KEYS[1])}
end
local previous = tonumber(string.match(ARGV[3], '|(%d+)$') or '')
if previous and previous == tonumber(redis.call('GET', KEYS[2]) or '0') then
  redis.call('SET', KEYS[1], ARGV[3], 'PX', ARGV[2])
  return {1, ARGV[3], previous, 1}
end
if ARGV[4] == '0' then
  return {2}
end
local token = redis.call('INCR', KEYS[2])
local value = ARGV[1] .. '|' .. token
redis.call('SET', KEYS[1], value, 'PX', ARGV[2])
return {1, value, token, 0}
`;

/** Renews only our own lease: `{1}`, or `{0, holder value or '', PTTL}` when it is not ours any more. */
export const RENEW = `
local current = redis.call('GET', KEYS[1])
if current == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1}
end
return {0, current or '', redis.call('PTTL', KEYS[1])}
`;

/** Deletes the lease only if it is still ours (a graceful stop hands over at once). */
export const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`;
