/**
 * Atomic JSON writes (src/fs/atomic-json.ts) next to write-file-atomic (docs/decisions/less-by-hand.md):
 * latency of one durable write of a small JSON file (the OAuth tokens, the webhook secrets: about
 * 1 KiB), the fsync calls each makes (strace, when on PATH), and how each behaves where they differ
 * (concurrent writes to one file, a path that is a symlink).
 *
 * The files are written under the repository (a real disk: fsync on tmpfs costs nothing).
 * Run after `npm run build`, with the candidate installed without saving it:
 *   npm i --no-save write-file-atomic && node bench/less-by-hand/atomic-write.mjs [writes=200]
 */
import { spawnSync } from 'node:child_process';
import { lstat, mkdtemp, open, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const WRITES = Number(process.argv[2] ?? 200);
const require = createRequire(import.meta.url);
const writeFileAtomic = require('write-file-atomic');
const { writeJsonAtomically } = await import('../../dist/fs/atomic-json.js');
const root = fileURLToPath(new URL('../..', import.meta.url));

const MODE = 0o600;
const value = { access_token: 'a'.repeat(40), refresh_token: 'r'.repeat(40), scopes: ['identify', 'guilds'], padding: 'x'.repeat(800) };
const text = (v) => `${JSON.stringify(v, null, 2)}\n`;

const VARIANTS = {
  ours: (path, v) => writeJsonAtomically(path, v, MODE),
  'write-file-atomic': (path, v) => writeFileAtomic(path, text(v), { mode: MODE }),
  'write-file-atomic + directory fsync': async (path, v) => {
    await writeFileAtomic(path, text(v), { mode: MODE });
    const directory = await open(dirname(path), 'r');
    await directory.sync();
    await directory.close();
  },
};

const percentile = (values, p) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))];

async function latency(dir) {
  const samples = Object.fromEntries(Object.keys(VARIANTS).map((name) => [name, []]));
  // Interleaved, so that a burst of load elsewhere falls on every variant alike.
  for (let i = 0; i < WRITES; i++) {
    for (const [name, write] of Object.entries(VARIANTS)) {
      const started = performance.now();
      await write(join(dir, `${name.replace(/\W+/g, '-')}.json`), { ...value, i });
      samples[name].push(performance.now() - started);
    }
  }
  return samples;
}

/** fsync/fdatasync calls of one write, counted by strace in a child process. */
function syscalls(name) {
  const script = `
    const { createRequire } = await import('node:module');
    const require = createRequire(${JSON.stringify(import.meta.url)});
    const { writeJsonAtomically } = await import(${JSON.stringify(new URL('../../dist/fs/atomic-json.js', import.meta.url).href)});
    const path = ${JSON.stringify(join(root, '.bench-strace.json'))};
    if (${JSON.stringify(name)} === 'ours') await writeJsonAtomically(path, { a: 1 }, 0o600);
    else await require('write-file-atomic')(path, '{"a":1}\\n', { mode: 0o600 });
    (await import('node:fs')).rmSync(path, { force: true });`;
  // strace writes its trace to stderr; the script prints nothing.
  const run = spawnSync('strace', ['-f', '-e', 'trace=fsync,fdatasync', process.execPath, '--input-type=module', '-e', script], { encoding: 'utf8' });
  if (run.error) return run.error.code === 'ENOENT' ? 'strace not on PATH' : `strace failed: ${run.error.message}`;
  if (run.status !== 0) return `strace failed: ${run.stderr.split('\n').slice(-3).join(' ')}`;
  return run.stderr.split('\n').filter((line) => /\b(fsync|fdatasync)\(/.test(line) && / = 0$/.test(line)).length;
}

/** Of `rounds` bursts of 10 writes to one file started together, how many end with the last write's value. */
async function lastWriteWins(dir, write, rounds = 20) {
  let kept = 0;
  for (let round = 0; round < rounds; round++) {
    const path = join(dir, `race-${round}.json`);
    await Promise.all(Array.from({ length: 10 }, (_, i) => write(path, { i })));
    if (JSON.parse(await readFile(path, 'utf8')).i === 9) kept += 1;
  }
  return `${kept} of ${rounds}`;
}

/** What a write to a path that is a symlink does: replaces the link, or writes its target. */
async function throughSymlink(dir, name, write) {
  const target = join(dir, `target-${name.replace(/\W+/g, '-')}.json`);
  const link = join(dir, `link-${name.replace(/\W+/g, '-')}.json`);
  await writeFile(target, '{}\n');
  await symlink(target, link);
  await write(link, { written: true });
  const stillLink = (await lstat(link)).isSymbolicLink();
  const targetWritten = (await readFile(target, 'utf8')).includes('written');
  return stillLink && targetWritten ? 'writes the target, keeps the link' : !stillLink && !targetWritten ? 'replaces the link with a file' : `link ${stillLink}, target written ${targetWritten}`;
}

const dir = await mkdtemp(join(root, '.bench-atomic-'));
try {
  console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}, node ${process.version}, ${WRITES} writes each of ${text(value).length} bytes, ext4 under ${root}\n`);
  const samples = await latency(dir);
  const oursMedian = percentile(samples.ours, 0.5);
  console.log('| write | median ms | p95 ms | median vs ours | fsync calls per write | 10 writes at once: last one kept | path is a symlink |');
  console.log('| --- | ---: | ---: | ---: | ---: | --- | --- |');
  for (const [name, write] of Object.entries(VARIANTS)) {
    const median = percentile(samples[name], 0.5);
    const calls = name === 'write-file-atomic + directory fsync' ? 'file + directory' : syscalls(name);
    console.log(
      `| ${name} | ${median.toFixed(2)} | ${percentile(samples[name], 0.95).toFixed(2)} | ${(median / oursMedian).toFixed(2)} | ${calls} | ${await lastWriteWins(dir, write)} | ${await throughSymlink(dir, name, write)} |`,
    );
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
