/**
 * One server under load for bench/webhooks.bench.ts, in a process of its own (so it does not share
 * an event loop with the load generator). Started by the bench with `fork()`:
 *
 *   node bench/helpers/webhook-target.mjs <target>
 *
 * targets: `receiver` (our receiver, no-op pipeline), `receiver-ledger` (our receiver, the real
 * vote pipeline on the file ledger, one no-op in-process hook), `topgg-sdk` (@top-gg/sdk's
 * `Webhook.listener` on Express), `bare` (node:http, HMAC check only, 204). Ours log as the
 * daemon does by default (`info`, JSON lines; see `daemonLogger`).
 *
 * Environment: BENCH_V1_SECRET (the `whs_...` secret of v1 deliveries), BENCH_V0_SECRET (the
 * legacy `Authorization` secret), BENCH_PROJECT_ID, BENCH_PATH (the webhook path).
 *
 * Protocol (IPC): the child sends `{ ready: true, url }` (the webhook URL, path included) once it listens; on `{ stop: true }` it
 * sends `{ stats }` (its CPU time and what its handler saw) and exits. It exits by itself when the
 * parent goes away (IPC disconnect) and after a hard limit of 120 s, so it can never outlive the bench.
 *
 * Our receiver is TypeScript: this script imports the built `dist/` (`npm run build` first; the
 * bench checks that dist/ is not older than src/webhooks/).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';

const target = process.argv[2];
const V1_SECRET = process.env.BENCH_V1_SECRET ?? '';
const V0_SECRET = process.env.BENCH_V0_SECRET ?? '';
const PROJECT_ID = process.env.BENCH_PROJECT_ID ?? '';
const PATH = process.env.BENCH_PATH ?? '/webhook';
const HARD_LIMIT_MS = 120_000;

if (!process.send) throw new Error('webhook-target.mjs is started by bench/webhooks.bench.ts (fork, with IPC)');
if (!V1_SECRET || !V0_SECRET || !PROJECT_ID) throw new Error('BENCH_V1_SECRET, BENCH_V0_SECRET and BENCH_PROJECT_ID are required');

/** What the handler saw, reported at stop (a target that answers 2xx without doing the work is not measured). */
const seen = { handled: 0, accepted: 0, duplicates: 0, logLines: 0 };
/** Set by each target: stops its server and whatever it owns. */
let close = async () => {};

// ---------------------------------------------------------------------------------------------
// (c) The practical ceiling: node:http, read the body, check `t` and the v1 HMAC in constant time, 204.
function bareServer() {
  const TOLERANCE_S = 300;
  const secret = Buffer.from(V1_SECRET);
  const server = createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== PATH) {
      res.writeHead(404).end();
      return;
    }
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      const header = req.headers['x-topgg-signature'];
      const match = typeof header === 'string' ? /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header) : null;
      if (!match || Math.abs(Date.now() / 1000 - Number(match[1])) > TOLERANCE_S) {
        res.writeHead(401).end();
        return;
      }
      const expected = createHmac('sha256', secret).update(`${match[1]}.`).update(body).digest();
      if (!timingSafeEqual(expected, Buffer.from(match[2], 'hex'))) {
        res.writeHead(401).end();
        return;
      }
      seen.handled += 1;
      res.writeHead(204).end();
    });
  });
  return listen(server);
}

// ---------------------------------------------------------------------------------------------
// (b) What users would otherwise pick: @top-gg/sdk's Webhook.listener on Express (legacy scheme).
async function topggSdkServer() {
  const { default: express } = await import('express');
  const { Webhook } = await import('@top-gg/sdk');
  const app = express();
  const webhook = new Webhook(V0_SECRET);
  app.post(
    PATH,
    webhook.listener(async (vote) => {
      if (vote.type === 'upvote') seen.handled += 1;
    }),
  );
  const server = createServer(app);
  return listen(server);
}

// ---------------------------------------------------------------------------------------------
// (a) Ours. `ledger`: the real vote pipeline (file ledger in a temp directory, fsync on every
// commit, one no-op in-process hook); otherwise a no-op pipeline, so the disk is not measured.
async function receiverServer(ledger) {
  const { createWebhookReceiver } = await import('../../dist/webhooks/receiver.js');
  const logger = await daemonLogger();
  let pipeline;
  let teardown = async () => {};
  if (ledger) {
    const { createFileVoteLedger } = await import('../../dist/votes/ledger-file.js');
    const { createVotePipeline } = await import('../../dist/votes/pipeline.js');
    const { createInProcessHook } = await import('../../dist/votes/hooks/in-process.js');
    const directory = mkdtempSync(join(tmpdir(), 'listing-agent-webhooks-bench-'));
    // Gone however the process ends (a stop, the parent going away, the hard limit).
    process.on('exit', () => rmSync(directory, { recursive: true, force: true }));
    const fileLedger = createFileVoteLedger({ directory });
    const hook = createInProcessHook({ listeners: () => [async () => {}] });
    const real = createVotePipeline({ ledger: fileLedger, hooks: [hook], logger, now: Date.now });
    await real.start();
    pipeline = {
      async ingest(votes, road) {
        const result = await real.ingest(votes, road);
        seen.handled += votes.length;
        seen.accepted += result.accepted.length;
        seen.duplicates += result.duplicates;
        return result;
      },
    };
    teardown = async () => {
      await real.stop(Date.now() + 2_000);
      await fileLedger.close();
      rmSync(directory, { recursive: true, force: true });
    };
  } else {
    pipeline = {
      async ingest(votes) {
        seen.handled += votes.length;
        seen.accepted += votes.length;
        return { accepted: votes, duplicates: 0 };
      },
    };
  }
  const receiver = createWebhookReceiver({
    listen: { host: '127.0.0.1', port: 0 },
    path: PATH,
    secrets: [V1_SECRET],
    pipeline,
    // Only v0 deliveries need it; v1 `vote.create` carries its project.
    projectId: () => PROJECT_ID,
    logger,
  });
  const url = await receiver.start(); // with the path
  close = async () => {
    await receiver.stop();
    await teardown();
  };
  return url;
}

/**
 * The daemon's logger as `listing-agent run` makes it, at the default level (`info`) in JSON
 * lines: whatever the receiver and the pipeline log at that level is part of what is measured.
 * The lines go to /dev/null with one synchronous write each (as to stdout on a file or a pipe on
 * Linux), counted for the report.
 */
async function daemonLogger() {
  const { createLogger } = await import('../../dist/log/logger.js');
  const fd = openSync('/dev/null', 'w');
  const destination = new Writable({
    write(chunk, _encoding, done) {
      writeSync(fd, chunk);
      seen.logLines += 1;
      done();
    },
  });
  return createLogger({ level: 'info', format: 'json', destination, secrets: [V1_SECRET, V0_SECRET] });
}

// ---------------------------------------------------------------------------------------------
function listen(server) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      close = () =>
        new Promise((done) => {
          server.close(() => done());
          server.closeAllConnections();
        });
      resolve(`http://127.0.0.1:${server.address().port}${PATH}`);
    });
  });
}

const starters = {
  bare: bareServer,
  'topgg-sdk': topggSdkServer,
  receiver: () => receiverServer(false),
  'receiver-ledger': () => receiverServer(true),
};
const start = starters[target];
if (!start) throw new Error(`unknown target ${target}: one of ${Object.keys(starters).join(', ')}`);

/** Stops the server (removing the ledger's temp directory), then exits; at most 2 s. */
function shutdown(code) {
  setTimeout(() => process.exit(code), 2_000).unref();
  close()
    .catch(() => undefined)
    .finally(() => process.exit(code));
}
const hardLimit = setTimeout(() => shutdown(2), HARD_LIMIT_MS);
hardLimit.unref();
process.on('disconnect', () => shutdown(0));
process.on('SIGINT', () => shutdown(130));
process.on('SIGTERM', () => shutdown(143));

let cpuAtStart = process.cpuUsage();
let startedAt = performance.now();
process.on('message', async (message) => {
  if (message?.reset) {
    // The measured phase begins (after the warm-up): CPU and counters from here.
    cpuAtStart = process.cpuUsage();
    startedAt = performance.now();
    seen.handled = seen.accepted = seen.duplicates = seen.logLines = 0;
    process.send({ reset: true });
    return;
  }
  if (message?.stop) {
    const cpu = process.cpuUsage(cpuAtStart);
    const wallMs = performance.now() - startedAt;
    const stats = { ...seen, cpuMs: (cpu.user + cpu.system) / 1000, wallMs, rssBytes: process.memoryUsage().rss };
    await close().catch(() => undefined);
    process.send({ stats }, () => process.exit(0));
  }
});

const url = await start();
process.send({ ready: true, url });
