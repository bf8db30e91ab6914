import { describe, expect, it } from 'vitest';
import { formatBytes, roomOutcome, unwritableFix } from '../../../src/doctor/checks/state.js';
import { errno } from '../store/helpers.js';

describe('doctor: the room in the state directory', () => {
  it('is ok with room, and warns below twice the ledger\'s reserve, saying what happens when it is full', () => {
    expect(roomOutcome('/s', 10 * 1024 * 1024, 262_144, 'no state.json yet')).toMatchObject({ status: 'ok', summary: '/s is writable (10.0 MiB free); no state.json yet' });
    expect(roomOutcome('/s', 100_000, 262_144, 'no state.json yet')).toMatchObject({
      status: 'warn',
      summary: 'only 97.7 KiB free on the device holding /s',
      fix: expect.stringContaining('the agent refuses new votes (webhook deliveries answered 503) until it can write again'),
    });
  });

  it('tells when the ledger gave up its reserve', () => {
    expect(roomOutcome('/s', 10 * 1024 * 1024, 0, 'x').summary).toContain('the vote ledger gave up its reserve for finished votes when the disk filled, and takes it back once there is room');
    expect(roomOutcome('/s', undefined, undefined, 'x').summary).toBe('/s is writable; x');
  });

  it('fixes by cause', () => {
    expect(unwritableFix(errno('ENOSPC', 'x'))).toMatch(/^free space on that file system/);
    expect(unwritableFix(errno('EROFS', 'x'))).toMatch(/^remount it read-write/);
    expect(unwritableFix(errno('EACCES', 'x'))).toMatch(/chown/);
    expect([0, 1023, 1024, 5 * 1024 * 1024].map(formatBytes)).toEqual(['0 bytes', '1023 bytes', '1.0 KiB', '5.0 MiB']);
  });
});
