import { longestCronGapMs } from '../runtime/scheduler.js';
import type { ListingAgentConfig } from '../config/schema.js';

/**
 * The longest expected time between two regular stats posts (ms): `stats.interval`, or with
 * `stats.schedule` the longest gap between its matches in the coming week (`interval` when the
 * pattern matches fewer than twice), plus `stats.jitter`, the most a post may be held back.
 * `/metrics` shows it as `listing_agent_stats_interval_seconds`, for the alert on the age of the
 * last successful post.
 */
export function longestPostGapMs(config: Pick<ListingAgentConfig['stats'], 'interval' | 'schedule' | 'jitter'>, now: number): number {
  const gap = config.schedule !== undefined ? (longestCronGapMs(config.schedule, now) ?? config.interval) : config.interval;
  return gap + config.jitter;
}
