import { describe, expect, it } from 'vitest';
import { createConfirmer } from '../../../src/redis/confirm.js';
import type { RedisClient } from '../../../src/redis/connection-types.js';

/** A client that answers INFO replication with `replicas` (settable) and holds each WAIT until `release()`. */
function fakeClient(initial: number) {
  let replicas = initial;
  const sent: string[][] = [];
  const waits: Array<(count: number) => void> = [];
  const client = {
    sendCommand(args: string[]) {
      sent.push(args);
      if (args[0] === 'INFO') return Promise.resolve(`# Replication\r\nrole:master\r\nconnected_slaves:${replicas}\r\n`);
      return new Promise<number>((resolve) => waits.push(resolve));
    },
  } as unknown as RedisClient;
  return {
    client,
    sent,
    release: (count: number) => waits.splice(0).forEach((resolve) => resolve(count)),
    setReplicas: (count: number) => {
      replicas = count;
    },
  };
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

  it('asks a primary that had a replica for one once it has none (promoted away, or gone); another server for what it has', async () => {
    let now = 0;
    const fake = fakeClient(1);
    const told: Array<string | undefined> = [];
    const onRefused = (reason: string | undefined) => told.push(reason);
    const confirmer = createConfirmer({ client: () => fake.client, replicas: undefined, timeoutMs: 500, now: () => now, onRefused });
    const waits = () => fake.sent.filter((args) => args[0] === 'WAIT');
    const before = confirmer.confirm('a');
    await tick();
    fake.release(1);
    await before;
    // Its replica is promoted away from it: read again, it has none, and it is still asked for one.
    fake.setReplicas(0);
    now = 6_000;
    const alone = confirmer.confirm('the record of 1 vote(s)');
    await tick();
    await tick();
    expect(waits()).toEqual([['WAIT', '1', '500'], ['WAIT', '1', '500']]);
    fake.release(0);
    await expect(alone).rejects.toThrow(
      'Redis: the record of 1 vote(s) is not confirmed on 1 replica within 500 ms (0 confirmed): a failover could take it back, ' +
        'so it is refused (state.redis.replicas); this primary had a replica and has none now (promoted away from it, or gone: ' +
        'set state.redis.replicas to 0 if you removed it)',
    );
    expect(told).toEqual([expect.stringContaining('this primary had a replica and has none now')]);
    // Another server (the promoted one, whose old primary is gone): it has no replica, and takes writes alone.
    confirmer.forget();
    await confirmer.confirm('b');
    expect(waits()).toHaveLength(2);
    expect(told).toEqual([expect.any(String), undefined]);
    // Its replica joins: asked for one from then on.
    fake.setReplicas(1);
    now = 12_000;
    const joined = confirmer.confirm('c');
    await tick();
    await tick();
    expect(waits()).toHaveLength(3);
    fake.release(1);
    await joined;
  });
});
