import { describe, expect, it } from 'vitest';
import { pollReadiness } from '../../../src/votes/poll-readiness.js';

/** The readiness of `votes` after a poll, decided without the poller's client, store or schedule. */
describe('pollReadiness', () => {
  it('is ready after a clean poll, saying how many projects are polled and how often', () => {
    expect(pollReadiness({ projects: ['1'], failures: [] }, 60_000)).toEqual({ ready: true, detail: 'polling 1 project every 1m' });
    expect(pollReadiness({ projects: ['1', '2'], failures: [] }, 30_000)).toEqual({ ready: true, detail: 'polling 2 projects every 30s' });
    expect(pollReadiness({ projects: [], failures: [] }, 3_600_000)).toEqual({ ready: true, detail: 'no project to poll yet (checked every 1h)' });
  });

  it('is not ready after a failure, naming every project that failed and why', () => {
    const failures = [
      { project: '1', error: new Error('HTTP 503') },
      { project: 'projects', error: new Error('token refused') },
    ];
    expect(pollReadiness({ projects: ['1', '2'], failures }, 60_000)).toEqual({
      ready: false,
      detail: 'last poll failed (retried every 1m): 1: HTTP 503; projects: token refused',
    });
  });
});
