import { describe, expect, it } from 'vitest';
import { emulatorListenHint } from '../../../src/cli/commands/emulator.js';

describe('emulatorListenHint', () => {
  it('says what to change for the usual listen failures', () => {
    expect(emulatorListenHint('EADDRINUSE', '127.0.0.1', 4545, 'x')).toBe('port 4545 is in use: pick another with --port (0 picks a free one)');
    expect(emulatorListenHint('EADDRNOTAVAIL', '10.9.9.9', 4545, 'x')).toBe('10.9.9.9 is not an address of this machine: use --host 127.0.0.1');
    expect(emulatorListenHint('EACCES', '127.0.0.1', 80, 'x')).toBe('not allowed to listen on port 80: use a port above 1023');
  });
  it('falls back to the error message for anything else', () => {
    expect(emulatorListenHint(undefined, '127.0.0.1', 4545, 'listen EINVAL')).toBe('listen EINVAL');
    expect(emulatorListenHint('ERR_SOCKET_BAD_PORT', '127.0.0.1', 99999, 'bad port')).toBe('bad port');
  });
});
