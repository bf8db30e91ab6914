import { execFile, spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFileStore } from '../../../src/store/file.js';
import { removeTempDirs, tempDir } from './helpers.js';

// A real `kill -9`: the store runs in a child process (compiled by tsc, as there is no TS loader
// here) that acknowledges each durable write on stdout; the parent kills it mid-stream and checks
// that every acknowledged key is in a state file that still parses.

const root = resolve(import.meta.dirname, '../../..');
let build: string;

const CHILD = `
import { createFileStore } from './store/file.js';
const [directory, run] = process.argv.slice(2);
const store = createFileStore({ directory, flushDelayMs: 5, owner: { pid: process.pid, host: ${JSON.stringify(hostname())} } });
await store.open();
process.stdout.write('ready\\n');
let next = 0;
// Several writers at once, durable and not, as the vote pipeline and the poster would be.
const writer = async () => {
  for (;;) {
    const i = next++;
    await store.set('noise:' + (i % 50), { i, pad: 'x'.repeat(200) });
    await store.set('vote:' + run + ':' + i, { i }, { durable: true });
    process.stdout.write(i + '\\n');
  }
};
await Promise.all([writer(), writer(), writer(), writer()]);
`;

beforeAll(async () => {
  build = await tempDir();
  await promisify(execFile)(
    process.execPath,
    [join(root, 'node_modules/typescript/bin/tsc'), '--outDir', build, '--rootDir', join(root, 'src'), '--module', 'nodenext', '--target', 'es2022', '--strict', '--skipLibCheck', '--types', 'node', join(root, 'src/store/file.ts')],
    { cwd: root },
  );
  await writeFile(join(build, 'package.json'), '{"type":"module"}');
  await writeFile(join(build, 'child.js'), CHILD);
}, 60_000);

afterAll(removeTempDirs);

/** Runs the child until it acknowledged `killAfter` durable writes, SIGKILLs it, returns the acks. */
function runAndKill(directory: string, run: string, killAfter: number): Promise<Set<string>> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [join(build, 'child.js'), directory, run], { stdio: ['ignore', 'pipe', 'pipe'] });
    const acked = new Set<string>();
    let buffer = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) if (/^\d+$/.test(line)) acked.add(`vote:${run}:${line}`);
      if (acked.size >= killAfter && child.exitCode === null) child.kill('SIGKILL');
    });
    child.on('exit', (_code, signal) => (signal === 'SIGKILL' ? done(acked) : fail(new Error(`child exited on its own: ${stderr}`))));
  });
}

describe('file store: kill -9', () => {
  it('loses no acknowledged durable write and never leaves a broken state file', async () => {
    const directory = await tempDir();
    const everAcked = new Set<string>();
    for (const [run, killAfter] of [1, 37, 150, 400].entries()) {
      const acked = await runAndKill(directory, String(run), killAfter);
      for (const key of acked) everAcked.add(key);
      const store = createFileStore({ directory, owner: { pid: -1, host: hostname() }, isProcessAlive: () => false });
      await store.open();
      expect(store.recovered).toBeUndefined();
      const present = new Set(await store.keys('vote:'));
      expect([...everAcked].filter((key) => !present.has(key))).toEqual([]);
      expect(store.warnings()).toEqual([expect.stringMatching(/took over .*no longer runs/)]);
      await store.close();
    }
    expect(everAcked.size).toBeGreaterThanOrEqual(1 + 37 + 150 + 400);
  }, 60_000);
});
