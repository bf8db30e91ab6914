import { describe, expect, it, vi } from 'vitest';
import { NetworkError } from '../../../src/api/errors.js';
import { createTransport } from '../../../src/api/transport.js';

/**
 * Bun's stand-in for undici: an `Agent` with no methods at all (no close, no destroy, no dispatch;
 * Bun's own fetch pool sends), and a `request` that ignores the dispatcher. The demo once ended on
 * Bun with `TypeError: state.dispatcher.close is not a function`.
 */
const sent: string[] = [];
vi.mock('undici', () => ({
  Agent: class {},
  request: async (url: string) => {
    sent.push(url);
    return { statusCode: 200, headers: { 'content-type': 'application/json' }, body: { text: async () => '{"ok":true}' } };
  },
}));

describe('transport on a runtime whose undici Agent cannot close (Bun)', () => {
  it('sends, closes without error (twice), and refuses a call after close() as undici would', async () => {
    const transport = createTransport();
    const call = { family: 'v1' as const, method: 'GET' as const, url: 'https://listing.test/x', idempotent: true, secrets: [] };
    expect((await transport.send(call)).body).toEqual({ ok: true });
    await transport.close();
    await transport.close();
    const refused = await transport.send(call).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(NetworkError);
    expect((refused as Error).message).toContain('The client (its dispatcher) was closed; create a new one.');
    expect(sent).toEqual(['https://listing.test/x']);
  });
});
