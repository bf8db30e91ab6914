/*
 * A bot process for the reward stream tests, run as a child with ts-register.mjs: a vote consumer
 * whose handler prints the vote it took and then never finishes, so the test can SIGKILL the
 * process while it holds the vote unacknowledged.
 *
 * argv: <redis URL> <prefix> <stream key> <group> <consumer name> <claimIdleMs>
 * stdout: `started`, then `took <vote key> <entry ID>` for each vote handed to it.
 */
import { createVoteConsumer } from '../../src/votes/stream.js';

const [url, prefix, key, group, consumer, claimIdleMs] = process.argv.slice(2);

const votes = createVoteConsumer({
  url: url!,
  prefix: prefix!,
  key: key!,
  group: group!,
  consumer: consumer!,
  claimIdleMs: Number(claimIdleMs),
  blockMs: 200,
  handler: (vote, context) => {
    process.stdout.write(`took ${vote.key} ${context.entryId}\n`);
    return new Promise<void>(() => undefined);
  },
});
await votes.start();
process.stdout.write('started\n');
