import { execFile } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * The README's first command is `npm ci && npx listing-agent demo`: npx runs the package's own bin
 * as a program, so the built file must be executable with a node shebang (tsc writes 0644; the
 * build script sets the mode).
 */

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

describe('the listing-agent bin', () => {
  it('is the built CLI, executable, and runs as a program', async () => {
    const manifest = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    const bin = join(REPO, manifest.bin['listing-agent']!);
    expect((await readFile(bin, 'utf8')).startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect((await stat(bin)).mode & 0o111).not.toBe(0);
    const { stdout } = await promisify(execFile)(bin, ['--help']);
    expect(stdout).toMatch(/^Usage: listing-agent <command>/);
  });
});
