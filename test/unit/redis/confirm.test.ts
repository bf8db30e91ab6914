import { describe, expect, it } from 'vitest';
import { createConfirmer } from '../../../src/redis/confirm.js';
import type { RedisClient } from '../../../src/redis/connection-types.js';

/** A client that answers INFO replication with `replicas` and holds each WAIT until `release()`. */
function fakeClient(replicas: number) {
  const sent: string[][] = [];
  const waits: Array<(count: number) => void> = [];
  const client = {
    sendCommand(args: string[]) {
      sent.push(args);
      if (args[0] === 'INFO') return Promise.resolve(`# Replication\r\nrole:master\r\nconnected_slaves:${replicas}\r\n`);
      return new Promise<number>((resolve) => waits.push(resolve));
    },
  } as unknown as RedisClient;
  return { client, sent, release: (count: number) => waits.splice(0).forEach((resolve) => resolve(count)) };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('confirmed writes: WAIT, shared by the callers that ask while one is in flight', () => {
  it('waits for one replica when the primary has some, and shares the next WAIT between the callers that come meanwhile', async () => {
    const fake = fakeClient(2);
    const { confirm } = createConfirmer({ client: () => fake.client, replicas: undefined, timeoutMs: 500 });
    const first = confirm('a');
    await tick();
    const second = confirm('b');
    const third = confirm('c');
    await tick();
    expect(fake.sent.filter((args) => args[0] === 'WAIT')).toEqual([['WAIT', '1', '500']]);
    fake.release(1);
    await first;
    await tick();
    // One more WAIT for b and c: the first may have left before their writes.
    expect(fake.sent.filter((args) => args[0] === 'WAIT')).toHaveLength(2);
    fake.release(1);
    await Promise.all([second, third]);
  });

  it('waits for nothing without replicas, and refuses what too few replicas confirmed', async () => {
    const none = fakeClient(0);
    await createConfirmer({ client: () => none.client, replicas: undefined, timeoutMs: 500 }).confirm('a');
    expect(none.sent.filter((args) => args[0] === 'WAIT')).toEqual([]);
    const two = fakeClient(2);
    const confirming = createConfirmer({ client: () => two.client, replicas: 2, timeoutMs: 500 }).confirm('the record of 1 vote(s)');
    await tick();
    two.release(1);
    await expect(confirming).rejects.toThrow(
      'Redis: the record of 1 vote(s) is not confirmed on 2 replicas within 500 ms (1 confirmed): a failover could take it back, so it is refused (state.redis.replicas)',
    );
  });

  it('reads the replicas again after a while, and after forget()', async () => {
    let now = 0;
    const fake = fakeClient(0);
    const confirmer = createConfirmer({ client: () => fake.client, replicas: undefined, timeoutMs: 500, now: () => now });
    await confirmer.confirm('a');
    await confirmer.confirm('b');
    expect(fake.sent.filter((args) => args[0] === 'INFO')).toHaveLength(1);
    now = 6_000;
    await confirmer.confirm('c');
    confirmer.forget();
    await confirmer.confirm('d');
    expect(fake.sent.filter((args) => args[0] === 'INFO')).toHaveLength(3);
  });
});
