/**
 * The least a durable webhook receiver can do, for bench/webhooks.bench.ts to hold ours against
 * (issue 33: our receiver's CPU per delivery within 1/0.6 of this server's, in the same run):
 *
 * - node:http, one POST path;
 * - the v1 signature as decisions.md gives it: `x-topgg-signature: t=<unix s>,v1=<hex>`, the hex
 *   HMAC-SHA256 of `<t>.<raw body>` with the secret, compared in constant time, `t` within 300 s
 *   of the clock either way; anything else a 401;
 * - the body parsed, `vote.create` only; the vote key `<user id>:<created_at in epoch ms>`;
 * - a `Map` of the keys seen (a repeated vote is answered once its first copy is durable, and
 *   written once);
 * - one appended JSON line per new vote, and a 204 only after the group commit that carries the
 *   line: the lines of every delivery read in one turn of the event loop go in one write, then
 *   one fdatasync (both on libuv's thread pool), then every delivery of the group is answered.
 *
 * No reward hook, no retries, no dead letters, no recovery, no logging: what is left when a
 * receiver only has to be durable before its 2xx.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { open } from 'node:fs/promises';
import { createServer } from 'node:http';

const TOLERANCE_S = 300;
const SIGNATURE = /^t=(\d+),v1=([0-9a-f]{64})$/;

/**
 * Appends lines to `handle` in group commits: lines handed over in one turn of the event loop
 * share one write and one fdatasync; the promise of each resolves once its commit is durable.
 */
function groupCommitter(handle) {
  let lines = [];
  let waiting = [];
  let scheduled = false;
  let writing = false;
  const counts = { commits: 0, bytes: 0 };
  async function commit() {
    scheduled = false;
    writing = true;
    while (lines.length > 0) {
      const text = lines.join('');
      const done = waiting;
      lines = [];
      waiting = [];
      try {
        await handle.write(text);
        await handle.datasync();
        counts.commits += 1;
        counts.bytes += Buffer.byteLength(text);
        for (const { resolve } of done) resolve();
      } catch (error) {
        for (const { reject } of done) reject(error);
      }
    }
    writing = false;
  }
  return {
    counts,
    append(line) {
      return new Promise((resolve, reject) => {
        lines.push(line);
        waiting.push({ resolve, reject });
        // At the end of this turn: the deliveries read meanwhile join the group.
        if (!scheduled && !writing) {
          scheduled = true;
          setImmediate(commit);
        }
      });
    },
  };
}

/** Whether `header` signs `body` with `secret` at a time within the tolerance of `nowS`. */
function signed(header, body, secret, nowS) {
  const match = typeof header === 'string' ? SIGNATURE.exec(header) : null;
  if (!match || Math.abs(nowS - Number(match[1])) > TOLERANCE_S) return false;
  const expected = createHmac('sha256', secret).update(`${match[1]}.`).update(body).digest();
  return timingSafeEqual(expected, Buffer.from(match[2], 'hex'));
}

/**
 * Starts the server on 127.0.0.1:0; `file` is its journal (created, appended to). Resolves with
 * its URL (path included), what it has seen, and `close()`.
 */
export async function startMinimalDurableServer({ secret, path, file }) {
  const handle = await open(file, 'a');
  const committer = groupCommitter(handle);
  /** Vote key -> the promise of the commit that made it durable. */
  const keys = new Map();
  const seen = { handled: 0, accepted: 0, duplicates: 0 };
  const key = Buffer.from(secret);
  const answer = (res, status) => res.writeHead(status).end();
  const server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== path) return answer(res, 404);
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      if (!signed(req.headers['x-topgg-signature'], body, key, Date.now() / 1000)) return answer(res, 401);
      let event;
      try {
        event = JSON.parse(body.toString('utf8'));
      } catch {
        return answer(res, 400);
      }
      if (event?.type !== 'vote.create') return answer(res, 204);
      const vote = event.data;
      const voteKey = `${vote.user.id}:${Date.parse(vote.created_at)}`;
      seen.handled += 1;
      let durable = keys.get(voteKey);
      if (durable === undefined) {
        seen.accepted += 1;
        durable = committer.append(`${JSON.stringify({ key: voteKey, vote })}\n`);
        keys.set(voteKey, durable);
      } else {
        seen.duplicates += 1;
      }
      durable.then(
        () => answer(res, 204),
        () => answer(res, 503),
      );
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${server.address().port}${path}`,
    seen,
    commits: () => committer.counts.commits,
    async close() {
      await new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await handle.close();
    },
  };
}
