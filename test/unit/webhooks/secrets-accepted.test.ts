import { describe, expect, it } from 'vitest';
import { acceptedSecrets } from '../../../src/webhooks/secrets.js';
import type { SecretEntry } from '../../../src/webhooks/secrets-file.js';

/** Which secrets a receiver accepts at a moment, decided without the file, Redis or a clock of its own. */

const T = Date.UTC(2026, 0, 1, 12);
const iso = (ms: number) => new Date(ms).toISOString();
const entry = (secret: string, extra: Partial<SecretEntry> = {}): SecretEntry => ({ secret, source: 'rotate', addedAt: iso(T - 60_000), ...extra });

describe('acceptedSecrets', () => {
  it('the config first, then live entries, then memory, each once', () => {
    const accepted = acceptedSecrets(['whs_config', 'whs_shared'], [entry('whs_file'), entry('whs_shared')], ['whs_memory', 'whs_file'], T);
    expect(accepted).toEqual({ secrets: ['whs_config', 'whs_shared', 'whs_file', 'whs_memory'], nextExpiry: Infinity });
  });

  it('drops an entry whose grace period ended, and says when the next one ends', () => {
    const entries = [entry('whs_gone', { expiresAt: iso(T) }), entry('whs_soon', { expiresAt: iso(T + 1_000) }), entry('whs_later', { expiresAt: iso(T + 5_000) })];
    expect(acceptedSecrets(['whs_config'], entries, [], T)).toEqual({ secrets: ['whs_config', 'whs_soon', 'whs_later'], nextExpiry: T + 1_000 });
    expect(acceptedSecrets(['whs_config'], entries, [], T + 1_000)).toEqual({ secrets: ['whs_config', 'whs_later'], nextExpiry: T + 5_000 });
    expect(acceptedSecrets(['whs_config'], entries, [], T + 5_000)).toEqual({ secrets: ['whs_config'], nextExpiry: Infinity });
  });
});
