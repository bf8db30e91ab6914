/*
 * The webhook receiver with the real vote pipeline on the file ledger, run as a child with
 * ts-register.mjs for test/integration/votes/journal-crash.test.ts. Its journal goes through the
 * ledger's `fs` option (the seam tests use to count fsyncs and inject failures), wrapped so that:
 *
 * - from the `killAtSync`-th fdatasync of `votes.journal` on (0: never), no fdatasync completes
 *   (the disk stalls), and the process SIGKILLs itself 100 ms after that one began: it dies after
 *   that append's write returned and before its fsync did, while deliveries keep coming. A ledger
 *   that answered before its fsync completed would acknowledge votes in those 100 ms;
 * - after every fdatasync of the journal that returned, the journal's size is written to
 *   `durableFile`: the bytes a power cut would keep.
 *
 * The in-process hook appends `<vote key> r<run>` to `hooksFile` for every call, synchronously
 * (the page cache keeps it through a SIGKILL), before it resolves.
 *
 * argv: <state directory> <hooks file> <durable file> <run> <killAtSync> <webhook secret>
 * stdout: `listening <url>` once the receiver listens; `stopped` after SIGTERM's graceful stop.
 */
import { appendFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { silentLogger } from '../../src/log/agent-logger.js';
import { nodeJournalFs, type JournalFs } from '../../src/votes/journal.js';
import { createFileVoteLedger } from '../../src/votes/ledger-file.js';
import { createInProcessHook } from '../../src/votes/hooks/in-process.js';
import { createVotePipeline } from '../../src/votes/pipeline.js';
import { createWebhookReceiver } from '../../src/webhooks/receiver.js';

const [directory, hooksFile, durableFile, run, killAtSync, secret] = process.argv.slice(2) as [string, string, string, string, string, string];
const journal = join(directory, 'votes.journal');
const killAt = Number(killAtSync);
let journalSyncs = 0;
/** How long the process lives on inside its last fsync (deliveries still arriving, hooks running). */
const KILL_DELAY_MS = 100;

const fs: JournalFs = {
  ...nodeJournalFs,
  async open(path, flags, mode) {
    const handle = await nodeJournalFs.open(path, flags, mode);
    if (path !== journal) return handle;
    return {
      writeFile: (data) => handle.writeFile(data),
      async datasync() {
        journalSyncs += 1;
        if (killAt > 0 && journalSyncs >= killAt) {
          // The append's bytes are in the file (the page cache), not on the disk: die inside the fsync.
          if (journalSyncs === killAt) setTimeout(() => process.kill(process.pid, 'SIGKILL'), KILL_DELAY_MS);
          return new Promise<void>(() => undefined);
        }
        await handle.datasync();
        writeFileSync(durableFile, String(statSync(journal).size));
      },
      sync: () => handle.sync(),
      close: () => handle.close(),
    };
  },
};

const ledger = createFileVoteLedger({ directory, fs });
const hook = createInProcessHook({
  listeners: () => [
    (vote) => {
      appendFileSync(hooksFile, `${vote.key} r${run}\n`);
    },
  ],
});
const pipeline = createVotePipeline({ ledger, hooks: [hook], logger: silentLogger, now: Date.now });
await pipeline.start();
const receiver = createWebhookReceiver({
  listen: { host: '127.0.0.1', port: 0 },
  path: '/webhooks/topgg',
  secrets: [secret],
  pipeline,
  logger: silentLogger,
});
process.stdout.write(`listening ${await receiver.start()}\n`);

process.once('SIGTERM', () => {
  void (async () => {
    await receiver.stop();
    await pipeline.stop(Date.now() + 5_000);
    await ledger.close();
    process.stdout.write('stopped\n');
    process.exit(0);
  })();
});
