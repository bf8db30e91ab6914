/**
 * Words for numbers and times on the status page. Pure; English; UTC, so that a page reads the
 * same on every host. assets/status/status-page.js repeats {@link relativeTime} to keep the "ago"
 * texts current between updates: change both together.
 */

/** A time as the page shows it: relative to the page's time, the absolute UTC time, and the ISO form. */
export interface TimeView {
  iso: string;
  /** `just now`, `3 min ago`, `in 2 h 5 min`. */
  relative: string;
  /** `2025-11-25 19:38:16 UTC`. */
  absolute: string;
}

/** `1,195`. */
export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}

/** `45 s`, `3 min`, `2 h 5 min`, `3 d 4 h`: two units at most, rounded down. */
export function formatSpan(ms: number): string {
  const seconds = Math.floor(Math.abs(ms) / 1000);
  if (seconds < 60) return `${seconds} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return minutes % 60 === 0 ? `${hours} h` : `${hours} h ${minutes % 60} min`;
  const days = Math.floor(hours / 24);
  return hours % 24 === 0 ? `${days} d` : `${days} d ${hours % 24} h`;
}

/** `just now` within 5 s, else `<span> ago` or `in <span>`. */
export function relativeTime(atMs: number, nowMs: number): string {
  const delta = atMs - nowMs;
  if (Math.abs(delta) < 5_000) return 'just now';
  return delta < 0 ? `${formatSpan(delta)} ago` : `in ${formatSpan(delta)}`;
}

/** `2025-11-25 19:38:16 UTC`. */
function absoluteTime(atMs: number): string {
  return `${new Date(atMs).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** A {@link TimeView} of an ISO time, relative to `nowMs`. */
export function timeView(isoText: string, nowMs: number): TimeView {
  const at = Date.parse(isoText);
  return { iso: isoText, relative: relativeTime(at, nowMs), absolute: absoluteTime(at) };
}

/** `123 ms`, `1.2 s`. */
export function formatLatency(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** Long opaque text shortened for a table cell (`abcdef…uvwxyz`); the whole text goes in a title. */
export function shorten(text: string, keep = 12): string {
  return text.length <= keep * 2 + 1 ? text : `${text.slice(0, keep)}…${text.slice(-keep)}`;
}

/** `1 vote`, `2 votes`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}
