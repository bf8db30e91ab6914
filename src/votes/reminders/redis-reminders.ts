import type { AgentLogger } from '../../log/agent-logger.js';
import { redisFailure, type RedisConnection } from '../../redis/connection.js';
import { REDIS_KEYS } from '../../redis/keys.js';
import { stepDelay } from '../../runtime/scheduler.js';
import type { Schedule } from '../pipeline.js';
import type { Vote } from '../types.js';
import { createLateLog, type LateLog } from './late-log.js';
import { realTimer, type Reminders } from './reminders.js';
import { recordInfo, recordOfVote, reminderVote, type ReminderInfo, type ReminderRecord } from './schedule.js';

/*
 * The reminder schedule shared by every agent of a bot through Redis (`state.redis`):
 *
 * - `reminders:schedule`, a hash from slot (`<project>\t<user>`) to the line of that voter's
 *   latest vote: the superseded rule's record, one per voter, whichever agent saw the vote;
 * - `reminders:due`, a sorted set of the same slots scored by due time (epoch ms);
 * - `reminders:sent`, the last ten lines handed to the hooks (the status page's "last sent").
 *
 * Any agent schedules (one Lua script per batch: a vote older than the voter's line is `known`,
 * a newer one replaces it). Only the leader fires: it reads what is due, hands it to the reminder
 * pipeline on the shared Redis ledger (whose `recordPending` is the dedupe point across agents:
 * key `reminder:<vote key>`), and only then removes it from the schedule (when the slot still
 * holds that line). A leader that dies between the two leaves the reminders scheduled: the next
 * leader hands them over again and the ledger drops them as known. A leader that dies after
 * the hand-over leaves them pending under its agent ID in the ledger, and a live agent's sweep
 * runs their hooks: a repeat only for a call in flight at the crash.
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

/** What the status page and the CLI show of a line due at `due` (undefined: a damaged line). */
function lineInfo(line: string, due: number): ReminderInfo | undefined {
  const record = parseLine(line);
  return record === undefined ? undefined : recordInfo(record, due);
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

/** `ARGV[1]` now, `ARGV[2]` limit: the lines due by now, with their due times (`line, due, line, due...`). */
const DUE = `
local slots = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
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

/** `line, sent (1|0)` pairs: removes each line still its slot's, notes the sent ones; replies the next due time or false. */
const REMOVE = `
for i = 1, #ARGV, 2 do
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

/** Reminders one round trip takes at most. */
const BATCH = 500;
/** How often the leader looks at the shared schedule at least (votes scheduled by other agents). Default 5 s. */
const LOOK_MS = 5_000;

/** Options of {@link createRedisReminders}. */
export interface RedisRemindersOptions {
  connection: RedisConnection;
  /** Hands due reminders over (the reminder pipeline on the Redis ledger); resolves once they are durable there. */
  send: (votes: readonly Vote[]) => Promise<unknown>;
  delayMs?: number;
  maxLatenessMs?: number;
  /** True while this agent leads (only the leader fires). */
  mayFire: () => boolean;
  logger: AgentLogger;
  now: () => number;
  schedule?: Schedule;
  /** The longest wait between two looks at the schedule. Default 5 000 ms. */
  lookMs?: number;
  count?: (result: 'scheduled' | 'skipped', n: number) => void;
}

interface RedisRemindersState {
  readonly o: RedisRemindersOptions;
  readonly keys: [string, string, string];
  readonly scripts: Record<'schedule' | 'due' | 'remove' | 'list', ReturnType<RedisConnection['script']>>;
  running: boolean;
  cancel: (() => void) | undefined;
  firing: Promise<void>;
  /** The next due time this agent knows of (its own schedule calls and its last look). */
  nextDue: number | undefined;
  failing: boolean;
  /** Skipped as late: one line per start, then summaries (`late-log.ts`). */
  readonly late: LateLog;
}

/** The {@link Reminders} of an agent on a shared Redis: any agent schedules, the leader fires. */
export function createRedisReminders(options: RedisRemindersOptions): Reminders {
  const { connection } = options;
  const s: RedisRemindersState = {
    o: options,
    keys: [connection.key(REDIS_KEYS.reminders), connection.key(REDIS_KEYS.remindersDue), connection.key(REDIS_KEYS.remindersSent)],
    scripts: {
      schedule: connection.script(SCHEDULE),
      due: connection.script(DUE),
      remove: connection.script(REMOVE),
      list: connection.script(LIST),
    },
    running: false,
    cancel: undefined,
    firing: Promise.resolve(),
    nextDue: undefined,
    failing: false,
    late: createLateLog({ logger: options.logger, now: options.now, maxLatenessMs: options.maxLatenessMs ?? 3_600_000 }),
  };
  const fire = () => {
    const step = () => fireNow(s, reminders);
    s.firing = s.firing.then(step, step);
    return s.firing;
  };
  const reminders: Reminders = {
    async start() {
      s.running = true;
      await fire();
      options.logger.info({ schedule: connection.describe() }, 'vote reminders scheduled in Redis; the leader fires them');
    },
    schedule: (votes) => scheduleVotes(s, votes, () => arm(s, reminders)),
    fire,
    async stop() {
      s.running = false;
      s.cancel?.();
      s.cancel = undefined;
      await s.firing.catch(() => undefined);
      s.late.flush();
    },
    next: (limit = 10) => listNext(s, limit),
    lastSent: () => lastSent(s),
    async size() {
      return Number(await command(s, ['HLEN', s.keys[0]], 'count the scheduled reminders'));
    },
  };
  return reminders;
}

async function command(s: RedisRemindersState, args: string[], doing: string): Promise<unknown> {
  try {
    return await s.o.connection.client.sendCommand(args);
  } catch (error) {
    throw redisFailure(doing, error);
  }
}

async function scheduleVotes(s: RedisRemindersState, votes: readonly Vote[], rearm: () => void): Promise<void> {
  const args: (string | number)[] = [];
  let earliest = Number.POSITIVE_INFINITY;
  const now = s.o.now();
  for (const vote of votes) {
    const record = recordOfVote(vote);
    if (record === undefined || record.expiresMs <= now) continue;
    const due = record.expiresMs + (s.o.delayMs ?? 0);
    args.push(slotOf(record), lineOf(record), due, record.createdMs);
    earliest = Math.min(earliest, due);
  }
  if (args.length === 0) return;
  let codes: unknown[];
  try {
    codes = (await s.scripts.schedule.run(s.keys, args)) as unknown[];
  } catch (error) {
    throw redisFailure(`schedule ${args.length / 4} vote reminder(s)`, error);
  }
  const scheduled = codes.filter((code) => Number(code) > 0).length;
  const replaced = codes.filter((code) => Number(code) === 2).length;
  if (scheduled > 0) s.o.count?.('scheduled', scheduled);
  if (replaced > 0) s.o.count?.('skipped', replaced);
  if (scheduled > 0 && (s.nextDue === undefined || earliest < s.nextDue)) {
    s.nextDue = earliest;
    rearm();
  }
}

/** One look as the leader: hands over what is due (in batches), skips what is too late, arms the next look. */
async function fireNow(s: RedisRemindersState, reminders: Reminders): Promise<void> {
  if (!s.running) return;
  if (!s.o.mayFire()) {
    s.nextDue = undefined;
    return arm(s, reminders);
  }
  try {
    for (let more = true; more && s.running && s.o.mayFire(); ) more = await fireBatch(s);
    if (s.failing) s.o.logger.info({}, 'vote reminders: Redis answers again; firing resumes');
    s.failing = false;
  } catch (error) {
    const what = 'vote reminders could not be fired (Redis); they stay scheduled and are tried again';
    if (!s.failing) s.o.logger.warn({ err: error, retryInMs: s.o.lookMs ?? LOOK_MS }, what);
    s.failing = true;
  }
  s.late.endLook();
  arm(s, reminders);
}

async function fireBatch(s: RedisRemindersState): Promise<boolean> {
  const now = s.o.now();
  const maxLatenessMs = s.o.maxLatenessMs ?? 3_600_000;
  const due = s.scripts.due.run(s.keys, [now, BATCH]);
  const reply = (await due.catch((error: unknown) => Promise.reject(redisFailure('read the due reminders', error)))) as string[];
  const send: string[] = [];
  const late: string[] = [];
  for (let i = 0; i < reply.length; i += 2) (now - Number(reply[i + 1]) > maxLatenessMs ? late : send).push(String(reply[i]));
  if (late.length > 0) s.o.count?.('skipped', late.length);
  s.late.add(late.length);
  const votes = send.flatMap((line) => {
    const record = parseLine(line);
    return record === undefined ? [] : [reminderVote(record)];
  });
  // Durable in the ledger (or known there) before it leaves the schedule: a crash between the two repeats nothing.
  if (votes.length > 0) await s.o.send(votes);
  const args: string[] = [];
  for (const line of send) args.push(line, '1');
  for (const line of late) args.push(line, '0');
  if (args.length > 0) {
    const removed = s.scripts.remove.run(s.keys, args);
    const next: unknown = await removed.catch((error: unknown) => Promise.reject(redisFailure('remove fired reminders', error)));
    s.nextDue = next === null || next === false ? undefined : Number(next);
  } else {
    const head = await listLines(s, 1);
    s.nextDue = head.length >= 2 ? Number(head[1]) : undefined;
  }
  return reply.length / 2 >= BATCH;
}

/** Arms the one timer: for the next due reminder, but no later than the next look. */
function arm(s: RedisRemindersState, reminders: Reminders): void {
  s.cancel?.();
  s.cancel = undefined;
  if (!s.running) return;
  const now = s.o.now();
  const lookMs = s.o.lookMs ?? LOOK_MS;
  // After a failure, the next look only: a reminder due in the past would otherwise re-fire at once.
  const delay = s.failing ? lookMs : stepDelay(s.nextDue ?? now + lookMs, now, lookMs);
  s.cancel = (s.o.schedule ?? realTimer)(() => void reminders.fire(), delay);
}

async function listLines(s: RedisRemindersState, limit: number): Promise<string[]> {
  try {
    return ((await s.scripts.list.run(s.keys, [limit])) as unknown[]).map(String);
  } catch (error) {
    throw redisFailure('list the scheduled reminders', error);
  }
}

async function listNext(s: RedisRemindersState, limit: number): Promise<ReminderInfo[]> {
  const reply = await listLines(s, limit);
  const out: ReminderInfo[] = [];
  for (let i = 0; i < reply.length; i += 2) {
    const info = lineInfo(reply[i]!, Number(reply[i + 1]));
    if (info !== undefined) out.push(info);
  }
  return out;
}

async function lastSent(s: RedisRemindersState): Promise<ReminderInfo[]> {
  const lines = (await command(s, ['LRANGE', s.keys[2], '0', '9'], 'list the last reminders sent')) as string[];
  const delayMs = s.o.delayMs ?? 0;
  return lines.flatMap((line) => {
    const record = parseLine(line);
    return record === undefined ? [] : [recordInfo(record, record.expiresMs + delayMs)];
  });
}
