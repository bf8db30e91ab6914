import { SHARD_SERVER_LIMITS } from '../../contract/limits.js';
import type { FieldIssue } from '../../errors.js';
import type { CountReading } from '../source.js';

/**
 * The pure core of the push source: what a bot may POST, and what the stored reports add up to.
 * No sockets and no clock here (time is passed in), so every rule is a plain function to test.
 */

/** One shard's counts, as the bot sends them. */
export interface ShardCountReport {
  /** The shard's ID, from 0 to `shard_count - 1`. */
  shard_id: number;
  /** Shards the whole bot runs. */
  shard_count: number;
  /** Servers this shard is in. */
  server_count: number;
}

/**
 * A push body: one report, an array of reports (one process holding several shards), or
 * `{ shards }`, the server count of every shard indexed by shard ID (the shard count is its length).
 */
export type PushBody = ShardCountReport | ShardCountReport[] | { shards: number[] };

/** Bodies above this are refused with 413: a report is tens of bytes, a 10 000-shard `{shards}` ~100 KiB less. */
export const MAX_PUSH_BODY_BYTES = 64 * 1024;

/** Shard counts above this are refused: no bot runs that many, and listing the missing would be huge. */
const MAX_SHARD_COUNT = 100_000;

/**
 * The reports a body holds, or the first problems with it (each naming its field); `implausible`
 * when a server count is past what one shard holds ({@link parsePushBody}'s `plausible`).
 */
export type ParsedPush = { ok: true; reports: ShardCountReport[] } | { ok: false; issues: FieldIssue[]; implausible: boolean };

/** What one parse collects: its problems, and whether the bound on a shard's servers applies. */
interface ParseContext {
  readonly issues: FieldIssue[];
  readonly plausible: boolean;
  implausible: boolean;
}

/** Why a shard's server count is refused, in the words of the 400 and the log line. */
function implausibleMessage(count: number): string {
  const { discordPerShard, plausiblePerShard } = SHARD_SERVER_LIMITS;
  return (
    `is ${count}, more than one shard holds (Discord shards a bot at ${discordPerShard.toLocaleString('en-US')} servers per shard; ` +
    `the push endpoint takes at most ${plausiblePerShard.toLocaleString('en-US')}): send each shard's own count`
  );
}

/** A server count: an integer of 0 or more, and with `plausible` at most what one shard holds. */
function serverCount(value: unknown, path: string, ctx: ParseContext): number | undefined {
  const count = integer(value, path, 0, Number.MAX_SAFE_INTEGER, ctx.issues);
  if (count === undefined || !ctx.plausible || count <= SHARD_SERVER_LIMITS.plausiblePerShard) return count;
  ctx.issues.push({ path, message: implausibleMessage(count) });
  ctx.implausible = true;
  return undefined;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function integer(value: unknown, path: string, min: number, max: number, issues: FieldIssue[]): number | undefined {
  if (value === undefined) {
    issues.push({ path, message: 'is missing' });
    return undefined;
  }
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    issues.push({ path, message: `must be an integer from ${min} to ${max}, not ${JSON.stringify(value)}` });
    return undefined;
  }
  return value;
}

function report(value: unknown, prefix: string, ctx: ParseContext): ShardCountReport | undefined {
  const { issues } = ctx;
  if (!isRecord(value)) {
    issues.push({ path: prefix || '(root)', message: 'must be an object {shard_id, shard_count, server_count}' });
    return undefined;
  }
  const at = (field: string) => (prefix ? `${prefix}.${field}` : field);
  const shardCount = integer(value.shard_count, at('shard_count'), 1, MAX_SHARD_COUNT, issues);
  const shardId = integer(value.shard_id, at('shard_id'), 0, MAX_SHARD_COUNT - 1, issues);
  const servers = serverCount(value.server_count, at('server_count'), ctx);
  if (shardCount === undefined || shardId === undefined || servers === undefined) return undefined;
  if (shardId >= shardCount) {
    issues.push({ path: at('shard_id'), message: `must be below shard_count (${shardCount}), not ${shardId}` });
    return undefined;
  }
  return { shard_id: shardId, shard_count: shardCount, server_count: servers };
}

/**
 * Reads a push body (already parsed from JSON). All or nothing: one bad entry refuses the whole
 * body, so that a half-recorded push never adds up to a wrong total. With `plausible` (what the
 * push endpoint and `pushShardCounts` ask), a shard's server count past
 * `SHARD_SERVER_LIMITS.plausiblePerShard` is refused too; reports the agent writes itself (Redis
 * shard reports) are read without it.
 */
export function parsePushBody(body: unknown, options: { plausible?: boolean } = {}): ParsedPush {
  const ctx: ParseContext = { issues: [], plausible: options.plausible ?? false, implausible: false };
  const { issues } = ctx;
  let reports: ShardCountReport[] = [];
  if (isRecord(body) && 'shards' in body) {
    const { shards } = body;
    if (!Array.isArray(shards) || shards.length === 0 || shards.length > MAX_SHARD_COUNT) {
      issues.push({
        path: 'shards',
        message: `must be a non-empty array of server counts, one per shard (index = shard ID), at most ${MAX_SHARD_COUNT}`,
      });
    } else {
      shards.forEach((count, index) => {
        const servers = serverCount(count, `shards[${index}]`, ctx);
        if (servers !== undefined) reports.push({ shard_id: index, shard_count: shards.length, server_count: servers });
      });
      // v0-style bodies send shard_count beside shards; accept it when it agrees.
      if (body.shard_count !== undefined && body.shard_count !== shards.length) {
        issues.push({
          path: 'shard_count',
          message: `must equal the length of shards (${shards.length}) or be left out, not ${JSON.stringify(body.shard_count)}`,
        });
      }
    }
  } else if (Array.isArray(body)) {
    if (body.length === 0) issues.push({ path: '(root)', message: 'is an empty array: send at least one report' });
    const seen = new Set<number>();
    body.forEach((entry, index) => {
      const parsed = report(entry, `[${index}]`, ctx);
      if (!parsed) return;
      if (seen.has(parsed.shard_id)) issues.push({ path: `[${index}].shard_id`, message: `shard ${parsed.shard_id} is reported twice` });
      else if (reports.length > 0 && reports[0]!.shard_count !== parsed.shard_count) {
        issues.push({
          path: `[${index}].shard_count`,
          message: `is ${parsed.shard_count} but [0].shard_count is ${reports[0]!.shard_count}: one push describes one shard layout`,
        });
      }
      seen.add(parsed.shard_id);
      reports.push(parsed);
    });
  } else if (isRecord(body)) {
    const parsed = report(body, '', ctx);
    if (parsed) reports = [parsed];
  } else {
    issues.push({
      path: '(root)',
      message: 'must be {shard_id, shard_count, server_count}, an array of them, or {shards: [server counts]}',
    });
  }
  return issues.length > 0 ? { ok: false, issues, implausible: ctx.implausible } : { ok: true, reports };
}

/** One line for a 400's `{error}`: the first problems, each with its field. */
export function describeIssues(issues: readonly FieldIssue[]): string {
  const shown = issues.slice(0, 5).map((issue) => `${issue.path}: ${issue.message}`);
  if (issues.length > 5) shown.push(`and ${issues.length - 5} more`);
  return shown.join('; ');
}

/** A report as the source keeps it: the newest per shard, with when it arrived. */
export interface StoredReport extends ShardCountReport {
  /** Epoch ms the agent received it. */
  receivedAt: number;
}

/** What {@link summarise} needs besides the reports. */
export interface SummaryOptions {
  /** Epoch ms now. */
  now: number;
  /** A report older than this is stale. */
  staleAfterMs: number;
  /**
   * Shards expected: the configured count, else the `shard_count` of the newest push (a bot that
   * reshards sends the new count). Undefined while neither is known.
   */
  shardCount: number | undefined;
  /** Whether `shardCount` comes from the config, for the reason's wording. */
  configured: boolean;
}

/** `2-5, 9, 12`: sorted IDs with runs of three or more as ranges, at most `max` items. */
function formatIds(ids: readonly number[], max = 10): string {
  const items: string[] = [];
  let i = 0;
  while (i < ids.length) {
    let j = i;
    while (j + 1 < ids.length && ids[j + 1] === ids[j]! + 1) j += 1;
    if (j - i >= 2) items.push(`${ids[i]}-${ids[j]}`);
    else for (let k = i; k <= j; k += 1) items.push(`${ids[k]}`);
    i = j + 1;
  }
  return items.length > max ? `${items.slice(0, max).join(', ')} and others` : items.join(', ');
}

/** `45s`, `12m`, `3h5m`: an age as a person reads it (whole minutes past the first one). */
function formatAge(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1_000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m`;
  return `${Math.floor(minutes / 60)}h${minutes % 60 ? `${minutes % 60}m` : ''}`;
}

/** IDs from 0 to `count - 1` not in `have` (sorted), in order. */
function missingIds(have: readonly number[], count: number): number[] {
  const missing: number[] = [];
  let next = 0;
  for (const id of [...have, count]) {
    for (let gap = next; gap < id; gap += 1) missing.push(gap);
    next = id + 1;
  }
  return missing;
}

/**
 * What the stored reports add up to: ready only when every expected shard has a report younger
 * than `staleAfterMs` made for the expected shard count; otherwise the reason names the missing,
 * stale and out-of-layout shards (`no report from shards 2, 5; shard 1 is stale (last report 12m ago)`).
 */
export function summarise(reports: Iterable<StoredReport>, options: SummaryOptions): CountReading {
  const expected = options.shardCount;
  if (expected === undefined) {
    return { ready: false, reason: 'no shard has reported yet: the bot must POST its counts to the push endpoint' };
  }
  const current = new Map<number, StoredReport>();
  const otherLayout: StoredReport[] = [];
  for (const r of reports) {
    if (r.shard_id >= expected) continue;
    if (r.shard_count === expected) current.set(r.shard_id, r);
    else otherLayout.push(r);
  }
  const have = [...current.keys()].sort((a, b) => a - b);
  const stale = have.map((id) => current.get(id)!).filter((r) => options.now - r.receivedAt >= options.staleAfterMs);
  const missing = missingIds(have, expected);
  if (missing.length === 0 && stale.length === 0) {
    const shards = have.map((id) => current.get(id)!.server_count);
    return { ready: true, serverCount: shards.reduce((sum, n) => sum + n, 0), shardCount: expected, shards };
  }
  const parts: string[] = [];
  if (missing.length > 0) {
    const otherIds = new Set(otherLayout.map((r) => r.shard_id));
    const unreported = missing.filter((id) => !otherIds.has(id));
    if (unreported.length > 0) parts.push(`no report from ${unreported.length === 1 ? 'shard' : 'shards'} ${formatIds(unreported)}`);
    if (otherLayout.length > 0) {
      const ids = otherLayout.map((r) => r.shard_id).sort((a, b) => a - b);
      const counts = [...new Set(otherLayout.map((r) => r.shard_count))].sort((a, b) => a - b).join(' or ');
      const why = options.configured ? `stats.push.shardCount is ${expected}` : 'the bot resharded: they must report again';
      parts.push(`${ids.length === 1 ? 'shard' : 'shards'} ${formatIds(ids)} last reported for ${counts} shards, not ${expected} (${why})`);
    }
  }
  if (stale.length === 1) {
    parts.push(`shard ${stale[0]!.shard_id} is stale (last report ${formatAge(options.now - stale[0]!.receivedAt)} ago)`);
  } else if (stale.length > 1) {
    const oldest = stale.reduce((min, r) => Math.min(min, r.receivedAt), Infinity);
    parts.push(`shards ${formatIds(stale.map((r) => r.shard_id))} are stale (oldest report ${formatAge(options.now - oldest)} ago)`);
  }
  return { ready: false, reason: parts.join('; ') };
}
