/**
 * The poller's CPU per vote before the pipeline: a votes page as the service sends it (100 votes,
 * times in the service's spelling) through `JSON.parse`, the response schema, `voteFromRecord` and
 * the checkpoint (`advanceCursorState`); best of 30 rounds of 100 pages. `bench:votes` starts after
 * this (it hands votes to the pipeline), so this is the part of a polled vote it does not see.
 * `BENCH_DIST` names another build's dist/ to compare.
 *
 *   node bench/helpers/votes-page.mjs
 *   BENCH_DIST=../main-checkout/dist node bench/helpers/votes-page.mjs
 */
import { pathToFileURL } from 'node:url';

const dist = process.env.BENCH_DIST ? pathToFileURL(`${process.env.BENCH_DIST.replace(/\/$/, '')}/`) : new URL('../../dist/', import.meta.url);
const { voteFromRecord, advanceCursorState } = await import(new URL('votes/cursor-state.js', dist).href);
const { votesPageSchema } = await import(new URL('api/schemas/votes.js', dist).href);

const PAGE = 100;
const PAGES = 100;
const T0 = Date.UTC(2026, 10, 1);
const body = JSON.stringify({
  cursor: 'next',
  data: Array.from({ length: PAGE }, (_, i) => ({
    user_id: String(300_000_000_000_000_000n + BigInt(i)),
    platform_id: String(100_000_000_000_000_000n + BigInt(i)),
    weight: 1,
    created_at: new Date(T0 + i * 431).toISOString(),
    expires_at: new Date(T0 + i * 431 + 43_200_000).toISOString(),
  })),
});
let best = Number.POSITIVE_INFINITY;
for (let round = 0; round < 30; round++) {
  const started = performance.now();
  for (let p = 0; p < PAGES; p++) {
    const page = votesPageSchema.parse(JSON.parse(body));
    const votes = page.data.map((record) => voteFromRecord(record, '803190510032756736'));
    advanceCursorState(undefined, { cursor: page.cursor, votes });
  }
  best = Math.min(best, performance.now() - started);
}
console.log(`a polled page, per vote (JSON.parse, schema, voteFromRecord, checkpoint): ${((best * 1000) / (PAGE * PAGES)).toFixed(2)} µs`);
