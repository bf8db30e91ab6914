import { describe, expect, it } from 'vitest';
import { attemptVerdict } from '../../../src/emulator/deliveries.js';

describe('attemptVerdict (decisions.md: retry on timeout or 5xx, never on 4xx)', () => {
  it('is delivered on any 2xx', () => {
    expect([200, 204, 299].map(attemptVerdict)).toEqual(['delivered', 'delivered', 'delivered']);
  });
  it('gives up on a 4xx: the receiver refused the event itself', () => {
    expect([400, 401, 404, 499].map(attemptVerdict)).toEqual(['final', 'final', 'final', 'final']);
  });
  it('tries again after no answer, a 5xx, a redirect or an informational status', () => {
    expect([null, 500, 503, 302, 100].map(attemptVerdict)).toEqual(['retry', 'retry', 'retry', 'retry', 'retry']);
  });
});
