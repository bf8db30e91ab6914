import { describe, expect, it } from 'vitest';
import { StoreError } from '../../../src/store/errors.js';
import type { FileStoreFs } from '../../../src/store/fs.js';
import { classifyWriteError, createWriteHealth, describeWriteProblem, probeDelay, systemErrorCode, type WriteHealthState } from '../../../src/store/write-health.js';
import { errno } from './helpers.js';

/** A manual timer: `run()` fires what is due, in order. */
function manualSchedule() {
  let now = 0;
  const timers: { at: number; fn: () => void; cancelled: boolean }[] = [];
  return {
    now: () => now,
    schedule(fn: () => void, ms: number) {
      const timer = { at: now + ms, fn, cancelled: false };
      timers.push(timer);
      return () => (timer.cancelled = true);
    },
    /** Advances to the next live timer and fires it; returns its delay. */
    next(): number {
      const due = timers.filter((t) => !t.cancelled).sort((a, b) => a.at - b.at)[0];
      if (!due) throw new Error('no timer');
      const delay = due.at - now;
      now = due.at;
      due.cancelled = true;
      due.fn();
      return delay;
    },
    pending: () => timers.filter((t) => !t.cancelled).length,
    advance: (ms: number) => (now += ms),
  };
}

/** A file system whose writes fail with `failing.error` while it is set (the probe file goes through it). */
function probeFs() {
  const failing: { error: NodeJS.ErrnoException | undefined; writes: number } = { error: undefined, writes: 0 };
  const fs = {
    async open() {
      return {
        async writeFile() {
          failing.writes += 1;
          if (failing.error) throw failing.error;
        },
        async datasync() {},
        async sync() {},
        async close() {},
      };
    },
    async unlink() {},
  } as unknown as FileStoreFs;
  return { fs, failing };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

describe('write health: the pure parts', () => {
  it('classifies by the system error under any StoreError that wraps it', () => {
    const wrapped = new StoreError('cannot append to /s/votes.journal: no space left on device', '/s', { cause: errno('ENOSPC', 'no space left on device') });
    expect(systemErrorCode(wrapped)).toBe('ENOSPC');
    expect(classifyWriteError(wrapped)).toBe('no_space');
    expect(classifyWriteError(errno('EDQUOT', 'quota'))).toBe('no_space');
    expect(classifyWriteError(errno('EROFS', 'read-only file system'))).toBe('read_only');
    expect(classifyWriteError(errno('EACCES', 'permission denied'))).toBe('denied');
    expect(classifyWriteError(errno('EIO', 'i/o'))).toBe('other');
    expect(classifyWriteError(new Error('no code'))).toBe('other');
  });

  it('says why in words, naming the directory', () => {
    expect(describeWriteProblem('/var/lib/la', errno('ENOSPC', 'x'))).toBe('no space left on the device holding /var/lib/la');
    expect(describeWriteProblem('/var/lib/la', errno('EDQUOT', 'x'))).toBe('the disk quota of the state directory /var/lib/la is used up');
    expect(describeWriteProblem('/var/lib/la', errno('EROFS', 'x'))).toBe('the state directory /var/lib/la is read-only: nothing can be written there');
    expect(describeWriteProblem('/var/lib/la', errno('EACCES', 'x'))).toBe('the state directory /var/lib/la cannot be written: permission denied');
    expect(describeWriteProblem('/var/lib/la', new StoreError('x', '/', { cause: errno('EIO', 'x') }))).toBe('cannot write the state directory /var/lib/la: input/output error');
  });

  it('backs off from 500 ms, doubling, to 5 s', () => {
    expect([0, 1, 2, 3, 4, 5, 50].map((attempt) => probeDelay(attempt))).toEqual([500, 1_000, 2_000, 4_000, 5_000, 5_000, 5_000]);
  });
});

describe('write health', () => {
  it('a failed write makes it unwritable with the reason; probes back off while they fail; one that succeeds makes it writable again', async () => {
    const clock = manualSchedule();
    const { fs, failing } = probeFs();
    const changes: WriteHealthState[] = [];
    const problems: string[] = [];
    const health = createWriteHealth({ directory: '/s', fs, now: clock.now, schedule: clock.schedule });
    health.onChange((state) => changes.push(state));
    health.onFailure((problem) => problems.push(problem));
    expect(health.writable).toBe(true);

    failing.error = errno('ENOSPC', 'no space left on device');
    health.failed(failing.error);
    expect(health.state()).toMatchObject({ writable: false, problem: 'no_space', reason: 'no space left on the device holding /s', nextProbeAt: 500 });
    // A second failure of the same kind changes nothing a listener hears.
    health.failed(failing.error);
    expect(changes).toHaveLength(1);

    expect(clock.next()).toBe(500);
    await health.settled();
    expect(clock.next()).toBe(1_000);
    await health.settled();
    // The disk went read-only meanwhile: the reason follows.
    failing.error = errno('EROFS', 'read-only file system');
    expect(clock.next()).toBe(2_000);
    await health.settled();
    expect(health.state()).toMatchObject({ writable: false, problem: 'read_only' });
    expect(problems).toEqual(['no_space', 'no_space', 'no_space', 'no_space', 'read_only']);

    failing.error = undefined;
    expect(clock.next()).toBe(4_000);
    await health.settled();
    expect(health.state()).toMatchObject({ writable: true, problem: undefined, reason: undefined });
    expect(changes.map((c) => c.writable)).toEqual([false, false, true]);
    expect(clock.pending()).toBe(0);
  });

  it('only a probe makes it writable: an ordinary write that succeeds asks for one, and every writer\'s probe must pass', async () => {
    const clock = manualSchedule();
    const { fs } = probeFs();
    const health = createWriteHealth({ directory: '/s', fs, now: clock.now, schedule: clock.schedule });
    let reserveBack = false;
    const remove = health.addProbe(async () => {
      if (!reserveBack) throw errno('ENOSPC', 'no space left on device');
    });
    health.failed(errno('ENOSPC', 'no space left on device'));
    clock.advance(600);
    // A completion record written into the reserve's room: a probe, which fails (no room for the reserve).
    health.succeeded();
    await health.settled();
    expect(health.writable).toBe(false);
    // Refused votes ask again, at most every 500 ms.
    reserveBack = true;
    health.nudge();
    await health.settled();
    expect(health.writable).toBe(false);
    clock.advance(500);
    health.nudge();
    await health.settled();
    expect(health.writable).toBe(true);
    remove();
    await flush();
  });

  it('stops probing when closed, and takes up again at the next failure', async () => {
    const clock = manualSchedule();
    const { fs } = probeFs();
    const health = createWriteHealth({ directory: '/s', fs, now: clock.now, schedule: clock.schedule });
    health.failed(errno('EROFS', 'x'));
    health.close();
    expect(clock.pending()).toBe(0);
    // A writer that opens again and fails: the probe is back, and it makes the health writable.
    health.failed(errno('ENOSPC', 'x'));
    expect(health.state().problem).toBe('no_space');
    expect(clock.pending()).toBe(1);
    clock.next();
    await health.settled();
    expect(health.writable).toBe(true);
  });
});
