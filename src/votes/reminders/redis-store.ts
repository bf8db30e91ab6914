import { redisFailure, type RedisConnection } from '../../redis/connection.js';
import { REDIS_KEYS } from '../../redis/keys.js';
import { FencedError } from '../../store/errors.js';
import type { ReminderStore } from './reminders.js';
import type { DueReminder, ReminderRecord } from './schedule.js';

/*
 * The reminder schedule shared by every agent of a bot through Redis (`state.redis`):
 *
 * - `reminders:schedule`, a hash from slot (`<project>\t<user>`) to the line of that voter's
 *   latest vote: the superseded rule's record, one per voter, whichever agent saw the vote;
 * - `reminders:due`, a sorted set of the same slots scored by due time (epoch ms);
 * - `reminders:sent`, the last ten lines handed to the hooks (the status page's "last sent").
 *
 * Any agent schedules (one Lua script per batch: a vote older than the voter's line is `known`,
 * a newer one replaces it). Only the leader fires (the timer's `mayFire`): it reads what is due,
 * hands it to the reminder pipeline on the shared Redis ledger (whose `recordPending` is the
 * dedupe point across agents: key `reminder:<vote key>`), and only then removes it from the
 * schedule (when the slot still holds that line). A leader that dies between the two leaves the
 * reminders scheduled: the next leader hands them over again and the ledger drops them as known.
 * A leader that dies after the hand-over leaves them pending under its agent ID in the ledger, and
 * a live agent's sweep runs their hooks: a repeat only for a call in flight at the crash.
 */

const clean = (value: string) => (value.includes('\t') || value.includes('\n') ? value.replace(/[\t\n]/g, ' ') : value);

/** A reminder's slot: `<project>\t<user>`. */
const slotOf = (r: ReminderRecord) => `${clean(r.projectId)}\t${clean(r.userId)}`;

/** The line Redis keeps of a reminder, tab-separated: project, user, created ms, expires ms, platform ID, weight, road. */
const lineOf = (r: ReminderRecord) => `${slotOf(r)}\t${r.createdMs}\t${r.expiresMs}\t${clean(r.platformId ?? '')}\t${r.weight}\t${r.road}`;

/** The reminder of a line, or undefined when it is not one. */
function parseLine(line: string): ReminderRecord | undefined {
  const parts = line.split('\t');
  if (parts.length !== 7) return undefined;
  const [projectId, userId, created, expires, platformId, weight, road] = parts as [string, string, string, string, string, string, string];
  const record: ReminderRecord = {
    projectId,
    userId,
    createdMs: Number(created),
    expiresMs: Number(expires),
    platformId: platformId === '' ? null : platformId,
    weight: Number(weight),
    road: road === 'webhook' ? 'webhook' : 'poll',
  };
  if (projectId === '' || userId === '') return undefined;
  return [record.createdMs, record.expiresMs, record.weight].every(Number.isFinite) ? record : undefined;
}


/** Slot (HGET) or older: keep; newer: replace. Replies one code per vote: 0 known, 1 scheduled, 2 replaced. */
const SCHEDULE = `
local out = {}
for i = 1, #ARGV, 4 do
  local slot, line, due, created = ARGV[i], ARGV[i + 1], ARGV[i + 2], tonumber(ARGV[i + 3])
  local old = redis.call('HGET', KEYS[1], slot)
  local code = 1
  if old then
    local was = tonumber(string.match(old, '^[^\\t]*\\t[^\\t]*\\t([^\\t]*)'))
    if was and was >= created then code = 0 else code = 2 end
  end
  if code > 0 then
    redis.call('HSET', KEYS[1], slot, line)
    redis.call('ZADD', KEYS[2], due, slot)
  end
  out[#out + 1] = code
end
return out
`;

/**
 * The firing scripts begin with the leader's fencing token (`ARGV[1]`, '' when not fenced): a
 * leader that lost its lease (frozen, partitioned, on the far side of a failover) fires nothing,
 * checked in the same script as the write. `KEYS[4]` is `leader:fence`.
 */
const FENCE = `
if ARGV[1] ~= '' and redis.call('GET', KEYS[4]) ~= ARGV[1] then
  return redis.error_reply('FENCED ' .. tostring(redis.call('GET', KEYS[4])))
end
`;

/** `ARGV[2]` now, `ARGV[3]` limit: the lines due by now, with their due times (`line, due, line, due...`). */
const DUE = `${FENCE}
local slots = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[2], 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for i = 1, #slots, 2 do
  local line = redis.call('HGET', KEYS[1], slots[i])
  if line then
    out[#out + 1] = line
    out[#out + 1] = slots[i + 1]
  else
    redis.call('ZREM', KEYS[2], slots[i])
  end
end
return out
`;

/**
 * After the token, `line, sent (1|0)` pairs: removes each line still its slot's, notes the sent
 * ones; replies the next due time or false.
 */
const REMOVE = `${FENCE}
for i = 2, #ARGV, 2 do
  local line = ARGV[i]
  local slot = string.match(line, '^([^\\t]*\\t[^\\t]*)')
  if slot and redis.call('HGET', KEYS[1], slot) == line then
    redis.call('HDEL', KEYS[1], slot)
    redis.call('ZREM', KEYS[2], slot)
  end
  if ARGV[i + 1] == '1' then redis.call('LPUSH', KEYS[3], line) end
end
redis.call('LTRIM', KEYS[3], 0, 9)
local head = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
return head[2] or false
`;

/** `ARGV[1]` limit: the first lines by due time, with their due times (`line, due, ...`; RESP2 and RESP3 alike). */
const LIST = `
local slots = redis.call('ZRANGE', KEYS[2], 0, tonumber(ARGV[1]) - 1, 'WITHSCORES')
local out = {}
for i = 1, #slots, 2 do
  local line = redis.call('HGET', KEYS[1], slots[i])
  if line then
    out[#out + 1] = line
    out[#out + 1] = tostring(slots[i + 1])
  end
end
return out
`;

/** Options of {@link createRedisReminderStore}. */
export interface RedisReminderStoreOptions {
  connection: RedisConnection;
  /** `votes.reminders.delay`. Default 0. */
  delayMs?: number;
  /** The leader's fencing token (undefined while it does not lead): firing is refused without the newest. Default: not fenced. */
  fence?: () => number | undefined;
}

const SCRIPTS = { schedule: SCHEDULE, due: DUE, remove: REMOVE, list: LIST };

/** Runs the store's scripts on its keys: a `FENCED` reply as a {@link FencedError}, any other failure as Redis's. */
function scriptRunner(connection: RedisConnection, keys: readonly string[]) {
  const loaded = Object.fromEntries(Object.entries(SCRIPTS).map(([name, source]) => [name, connection.script(source)])) as Record<
    keyof typeof SCRIPTS,
    ReturnType<RedisConnection['script']>
  >;
  return async (script: keyof typeof SCRIPTS, args: readonly (string | number)[], doing: string): Promise<unknown> => {
    try {
      return await loaded[script].run(keys, args);
    } catch (error) {
      const fenced = error instanceof Error ? /^FENCED (.*)$/.exec(error.message) : null;
      if (fenced) throw new FencedError(REDIS_KEYS.reminders, Number(args[0]), `the newest is ${fenced[1]}`);
      throw redisFailure(doing, error);
    }
  };
}

/** The firing scripts' first argument: the token, or '' when not fenced; refused at once while not leading. */
function fenceToken(fence: (() => number | undefined) | undefined): string {
  if (fence === undefined) return '';
  const held = fence();
  if (held === undefined) throw new FencedError(REDIS_KEYS.reminders, undefined);
  return String(held);
}

/** The {@link ReminderStore} every agent on a Redis shares. */
export function createRedisReminderStore(options: RedisReminderStoreOptions): ReminderStore {
  const { connection } = options;
  const delayMs = options.delayMs ?? 0;
  // Every script gets the four keys, `leader:fence` last (for the firing ones).
  const names = [REDIS_KEYS.reminders, REDIS_KEYS.remindersDue, REDIS_KEYS.remindersSent, REDIS_KEYS.fence];
  const keys = names.map((key) => connection.key(key));
  const run = scriptRunner(connection, keys);
  const token = () => fenceToken(options.fence);
  /** The line each record given out came from: a record is removed by its line exactly as stored. */
  const lines = new WeakMap<ReminderRecord, string>();
  /** `line, due, line, due...` as due reminders (damaged lines left out). */
  const reminders = (reply: unknown): DueReminder[] => {
    const parts = (reply as unknown[]).map(String);
    const out: DueReminder[] = [];
    for (let i = 0; i < parts.length; i += 2) {
      const record = parseLine(parts[i]!);
      if (record === undefined) continue;
      lines.set(record, parts[i]!);
      out.push({ record, due: Number(parts[i + 1]) });
    }
    return out;
  };
  const list = async (limit: number) => reminders(await run('list', [limit], 'list the scheduled reminders'));
  return {
    open: () => Promise.resolve(),
    async schedule(records) {
      if (records.length === 0) return { scheduled: 0, replaced: 0, soonest: undefined };
      const args = records.flatMap((r) => [slotOf(r), lineOf(r), r.expiresMs + delayMs, r.createdMs]);
      const codes = ((await run('schedule', args, `schedule ${records.length} vote reminder(s)`)) as unknown[]).map(Number);
      const scheduled = records.filter((_, i) => codes[i]! > 0);
      const soonest = scheduled.length === 0 ? undefined : Math.min(...scheduled.map((r) => r.expiresMs + delayMs));
      return { scheduled: scheduled.length, replaced: codes.filter((code) => code === 2).length, soonest };
    },
    async due(now, limit) {
      return reminders(await run('due', [token(), now, limit], 'read the due reminders'));
    },
    async end(sent, skipped) {
      const ended = (r: ReminderRecord, wasSent: boolean) => [lines.get(r) ?? lineOf(r), wasSent ? '1' : '0'];
      const endedLines = [...sent.flatMap((r) => ended(r, true)), ...skipped.flatMap((r) => ended(r, false))];
      await run('remove', [token(), ...endedLines], 'remove fired reminders');
    },
    nextDue: async () => (await list(1))[0]?.due,
    list,
    async size() {
      try {
        return Number(await connection.client.sendCommand(['HLEN', keys[0]!]));
      } catch (error) {
        throw redisFailure('count the scheduled reminders', error);
      }
    },
    async lastSent() {
      let sent: unknown[];
      try {
        sent = (await connection.client.sendCommand(['LRANGE', keys[2]!, '0', '9'])) as unknown[];
      } catch (error) {
        throw redisFailure('list the last reminders sent', error);
      }
      return sent.flatMap((line) => {
        const record = parseLine(String(line));
        return record === undefined ? [] : [{ record, due: record.expiresMs + delayMs }];
      });
    },
    close: () => Promise.resolve(),
    describe: () => connection.describe(),
  };
}
