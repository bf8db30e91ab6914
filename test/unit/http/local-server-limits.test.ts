import { describe, expect, it } from 'vitest';
import { LOCAL_SERVER_LIMITS, localServerLimits } from '../../../src/http/local-server.js';

describe('localServerLimits', () => {
  it('is the shared limits when the caller sets none', () => {
    expect(localServerLimits(undefined)).toEqual(LOCAL_SERVER_LIMITS);
  });

  it("takes the caller's timeouts over the shared ones", () => {
    expect(localServerLimits({ requestTimeout: 20_000, keepAliveTimeout: 1_000 })).toMatchObject({ requestTimeout: 20_000, keepAliveTimeout: 1_000, headersTimeout: 5_000 });
  });

  it('keeps headersTimeout at most requestTimeout, which node requires', () => {
    expect(localServerLimits({ requestTimeout: 2_000 }).headersTimeout).toBe(2_000);
    expect(localServerLimits({ headersTimeout: 9_000, requestTimeout: 3_000 }).headersTimeout).toBe(3_000);
    expect(localServerLimits({ headersTimeout: 1_000 }).headersTimeout).toBe(1_000);
  });
});
