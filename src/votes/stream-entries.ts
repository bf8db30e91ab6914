import type { Vote } from './types.js';

/*
 * The pure core of the reward stream: how a vote is written as a stream entry and read back,
 * and the replies of XREADGROUP / XAUTOCLAIM as plain data. No Redis here.
 */

/** The entry's fields: `key` (the vote key, readable in `redis-cli`), `vote` (the vote as JSON), `v` (format). */
const STREAM_FORMAT_VERSION = '1';

/** The field/value pairs XADD writes for `vote`. */
export function voteToFields(vote: Vote): string[] {
  return ['v', STREAM_FORMAT_VERSION, 'key', vote.key, 'vote', JSON.stringify(vote)];
}

/** One stream entry: its ID and its field/value pairs. */
export interface StreamEntry {
  id: string;
  fields: Record<string, string>;
}

const isString = (value: unknown): value is string => typeof value === 'string';

/** An entry's field list (`[f1, v1, f2, v2, ...]`) as a record; odd or non-text items are skipped. */
function fieldRecord(list: unknown): Record<string, string> {
  const fields: Record<string, string> = {};
  if (!Array.isArray(list)) return fields;
  for (let i = 0; i + 1 < list.length; i += 2) {
    const name = list[i];
    const value = list[i + 1];
    if (isString(name) && isString(value)) fields[name] = value;
  }
  return fields;
}

/** `[[id, [f, v, ...]], ...]` (RESP2) as entries; an entry Redis returns as nil (deleted) is skipped. */
function parseEntries(reply: unknown): StreamEntry[] {
  if (!Array.isArray(reply)) return [];
  const entries: StreamEntry[] = [];
  for (const item of reply) {
    if (!Array.isArray(item) || !isString(item[0])) continue;
    entries.push({ id: item[0], fields: fieldRecord(item[1]) });
  }
  return entries;
}

/**
 * XREADGROUP's reply as entries: `[[stream, entries]]` on the wire, which `@redis/client` hands
 * over as an object or a Map keyed by stream name; nil after the block timed out.
 */
export function parseReadGroupReply(reply: unknown): StreamEntry[] {
  if (Array.isArray(reply)) return reply.flatMap((stream: unknown) => (Array.isArray(stream) ? parseEntries(stream[1]) : []));
  if (reply instanceof Map) return [...reply.values()].flatMap((entries: unknown) => parseEntries(entries));
  if (typeof reply === 'object' && reply !== null) return Object.values(reply).flatMap((entries: unknown) => parseEntries(entries));
  return [];
}

/** XAUTOCLAIM's reply (`[next cursor, entries, deleted IDs]`). */
export function parseAutoClaimReply(reply: unknown): { cursor: string; entries: StreamEntry[] } {
  if (!Array.isArray(reply) || !isString(reply[0])) return { cursor: '0-0', entries: [] };
  return { cursor: reply[0], entries: parseEntries(reply[1]) };
}

/** XPENDING's extended reply (`[[id, consumer, idle ms, deliveries], ...]`) as deliveries by ID. */
export function parsePendingDeliveries(reply: unknown): Map<string, number> {
  const deliveries = new Map<string, number>();
  if (!Array.isArray(reply)) return deliveries;
  for (const item of reply) {
    if (Array.isArray(item) && isString(item[0]) && typeof item[3] === 'number') deliveries.set(item[0], item[3]);
  }
  return deliveries;
}

const isNullableString = (value: unknown): value is string | null => value === null || isString(value);

/**
 * The vote an entry carries, or why it carries none (the entry is poison: written by something
 * else, damaged, or of a newer format). Checked field by field: it is data from outside.
 */
export function voteFromEntry(entry: StreamEntry): { ok: true; vote: Vote } | { ok: false; problem: string } {
  const text = entry.fields.vote;
  if (text === undefined) return { ok: false, problem: 'has no vote field' };
  if (entry.fields.v !== undefined && entry.fields.v !== STREAM_FORMAT_VERSION) {
    return { ok: false, problem: `is of format ${entry.fields.v}, not ${STREAM_FORMAT_VERSION} (written by a newer listing-agent?)` };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, problem: 'has a vote field that is not JSON' };
  }
  if (typeof value !== 'object' || value === null) return { ok: false, problem: 'has a vote field that is not an object' };
  const vote = value as Record<string, unknown>;
  const bad = [
    ['key', isString(vote.key) && vote.key.length > 0],
    ['userId', isString(vote.userId)],
    ['platformId', isNullableString(vote.platformId)],
    ['projectId', isString(vote.projectId)],
    ['weight', typeof vote.weight === 'number' && Number.isFinite(vote.weight)],
    ['createdAt', isString(vote.createdAt)],
    ['expiresAt', isString(vote.expiresAt)],
    ['road', vote.road === 'poll' || vote.road === 'webhook'],
  ]
    .filter(([, ok]) => !ok)
    .map(([field]) => field);
  if (bad.length > 0) return { ok: false, problem: `has a vote with a missing or invalid ${bad.join(', ')}` };
  return { ok: true, vote: value as Vote };
}

/**
 * How long a vote's "already appended" marker lives: until the vote expires plus `markerTtlMs`
 * (the window in which the pipeline may run the hook for it again, as the ledger keeps its key),
 * and at least one minute.
 */
export function markerTtl(vote: Pick<Vote, 'expiresAt'>, markerTtlMs: number, now: number): number {
  const expiresAt = Date.parse(vote.expiresAt);
  const untilExpiry = Number.isFinite(expiresAt) ? Math.max(0, expiresAt - now) : 0;
  return Math.max(60_000, Math.round(untilExpiry + markerTtlMs));
}
