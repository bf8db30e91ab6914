import { timerDelay } from '../contract/timer-delay.js';

/**
 * Waiting with a time limit, the way every stop with a deadline waits: for work in flight to end,
 * but never past the deadline, and without a timer that keeps the process alive.
 */

/**
 * Waits for `work` at most `ms`: `'done'` when it settled in time (a rejection counts: whoever
 * owns the work handles its error), `'timeout'` otherwise. The timer is unref'd and cleared once
 * the race is over; `work` itself runs on either way.
 */
export async function settleWithin(work: Promise<unknown>, ms: number): Promise<'done' | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timerDelay(ms));
    timer.unref();
  });
  try {
    return await Promise.race([work.then(settled, settled), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

const settled = (): 'done' => 'done';
