import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createListingAgent, parseConfig, type ListingAgent } from '../../../src/agent/agent.js';
import { stateDirectoryCheck } from '../../../src/doctor/checks/state.js';
import type { DoctorDeps } from '../../../src/doctor/types.js';
import { signDelivery } from '../../../src/contract/signature.js';
import type { AgentLogger } from '../../../src/log/agent-logger.js';
import { createFileStore } from '../../../src/store/file.js';
import type { JournalFs } from '../../../src/votes/journal.js';
import { createFileVoteLedger } from '../../../src/votes/ledger-file.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { fakeDisk } from '../../helpers/fake-disk.js';
import { mountTmpfs, type Tmpfs } from '../../helpers/tmpfs.js';

/**
 * An agent (webhooks only, an in-process reward hook) whose state directory fills up and becomes
 * read-only: `/readyz` says so in words and is 200 again by itself once the disk takes writes;
 * deliveries not on disk are answered 503 with retry-after and rewarded once when re-sent; a clean
 * stop on a full disk and a restart fire no reward twice. Once on the fake disk (the injectable
 * fs), once on a real tmpfs where the test runs as root.
 */

const SECRET = 'whs_disk_test_secret';
const FAST_PROBE = { firstMs: 20, maxMs: 100 };

/** What the scenario does to the disk. */
interface Disk {
  directory: string;
  /** The fs of the store and the ledger; undefined: the real one. */
  fs: JournalFs | undefined;
  fill(): void;
  free(): void;
  readOnly(): Promise<void>;
  readWrite(): void;
}

interface Line {
  level: string;
  message: string;
  fields: Record<string, unknown>;
}

function captureLogger(lines: Line[]): AgentLogger {
  const at =
    (level: string) =>
    (obj: object | string, msg?: string): void => {
      lines.push(typeof obj === 'string' ? { level, message: obj, fields: {} } : { level, message: msg ?? '', fields: obj as Record<string, unknown> });
    };
  const logger: AgentLogger = { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug'), child: () => logger };
  return logger;
}

let seq = 0;
/** A new vote of the bot `fx`, cast a minute ago. */
function voteBody(fx: { projectId: string; platformId: string }): { key: string; body: string } {
  seq += 1;
  const created = new Date(Date.now() - 60_000 + seq).toISOString();
  const userId = String(300_000_000_000_000_000n + BigInt(seq));
  const body = JSON.stringify({
    type: 'vote.create',
    data: {
      id: String(900_000_000_000_000_000n + BigInt(seq)),
      weight: 1,
      created_at: created,
      expires_at: new Date(Date.parse(created) + 43_200_000).toISOString(),
      project: { id: fx.projectId, type: 'bot', platform: 'discord', platform_id: fx.platformId },
      user: { id: userId, platform_id: '200000000000000002', name: 'voter', avatar_url: null },
    },
  });
  return { key: `${userId}:${Date.parse(created)}`, body };
}

async function deliver(agent: ListingAgent, body: string): Promise<Response> {
  const headers = signDelivery({ secret: SECRET, rawBody: body, timestampSeconds: Math.floor(Date.now() / 1000) });
  return fetch(agent.webhookReceiverUrl!, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function readyz(agent: ListingAgent): Promise<{ status: number; body: { ready: boolean; components: Record<string, { ready: boolean; detail: string }> } }> {
  const response = await fetch(`${agent.healthServerUrl!}/readyz`);
  return { status: response.status, body: (await response.json()) as never };
}

async function metric(agent: ListingAgent, name: string): Promise<string | undefined> {
  const text = await (await fetch(`${agent.healthServerUrl!}/metrics`)).text();
  return text.split('\n').find((line) => line.startsWith(`${name} `))?.split(' ')[1];
}

async function startAgent(disk: Disk, emu: Awaited<ReturnType<typeof startTestEmulator>>, token: string, calls: string[], lines: Line[], gate?: Promise<void>) {
  const store = createFileStore({ directory: disk.directory, probeDelays: FAST_PROBE, ...(disk.fs ? { fs: disk.fs } : {}) });
  const ledger = disk.fs ? createFileVoteLedger({ directory: disk.directory, fs: disk.fs, writeHealth: store.writeHealth }) : undefined;
  const agent = createListingAgent({
    config: {
      service: { token, v1: emu.urls.v1, v0: emu.urls.v0 },
      state: { directory: disk.directory },
      health: { listen: '127.0.0.1:0' },
      webhooks: { enabled: true, listen: '127.0.0.1:0', secrets: [SECRET] },
    },
    store,
    ...(ledger ? { votes: { ledger } } : {}),
    logger: captureLogger(lines),
    reconnectDelaysMs: [50],
  });
  agent.on('vote', async (vote) => {
    await gate;
    calls.push(vote.key);
  });
  const ready = new Promise((resolve) => agent.once('ready', resolve));
  await agent.start();
  await ready;
  return agent;
}

/** Sends fresh votes until one is refused (a page may still take a line or two on a real disk); the keys accepted and the one refused. */
async function deliverUntilRefused(agent: ListingAgent, fx: { projectId: string; platformId: string }): Promise<{ accepted: string[]; refused: { key: string; body: string }; response: Response }> {
  const accepted: string[] = [];
  for (let i = 0; i < 200; i += 1) {
    const vote = voteBody(fx);
    const response = await deliver(agent, vote.body);
    if (response.status === 204) accepted.push(vote.key);
    else return { accepted, refused: vote, response };
  }
  throw new Error('200 deliveries accepted on a full disk');
}

async function scenario(disk: Disk): Promise<void> {
  const emu = await startTestEmulator();
  const fx = setupBot(emu);
  const calls: string[] = [];
  const lines: Line[] = [];
  const agent = await startAgent(disk, emu, fx.projectToken, calls, lines);
  const acknowledged: string[] = [];
  try {
    for (let i = 0; i < 5; i += 1) {
      const vote = voteBody(fx);
      expect((await deliver(agent, vote.body)).status).toBe(204);
      acknowledged.push(vote.key);
    }
    await until('the first rewards', () => calls.length === 5);
    expect((await readyz(agent)).status).toBe(200);
    expect(await metric(agent, 'listing_agent_state_writable')).toBe('1');

    // The disk fills.
    disk.fill();
    const full = await deliverUntilRefused(agent, fx);
    acknowledged.push(...full.accepted);
    expect(full.response.status).toBe(503);
    expect(full.response.headers.get('retry-after')).not.toBeNull();
    const noSpace = `no space left on the device holding ${disk.directory}`;
    const whileFull = await readyz(agent);
    expect(whileFull.status).toBe(503);
    expect(whileFull.body.components.store).toMatchObject({ ready: false, detail: expect.stringContaining(noSpace) });
    expect(whileFull.body.components.votes).toMatchObject({ ready: false, detail: expect.stringContaining(`cannot record new votes: ${noSpace}`) });
    expect(await metric(agent, 'listing_agent_state_writable')).toBe('0');
    const page = (await (await fetch(`${agent.healthServerUrl!}/status.json`)).json()) as { agent: { stateDirectory: { writable: boolean; problem: string; reason: string } } };
    expect(page.agent.stateDirectory).toMatchObject({ writable: false, problem: 'no_space', reason: noSpace });
    expect(lines.filter((l) => l.level === 'error' && l.message.startsWith(`cannot write the state directory: ${noSpace}`))).toHaveLength(1);

    // Freed: ready again by itself, no delivery needed; the refused vote, re-sent, is rewarded once.
    disk.free();
    await until('/readyz 200 after the disk was freed', async () => (await readyz(agent)).status === 200);
    expect(await metric(agent, 'listing_agent_state_writable')).toBe('1');
    expect((await deliver(agent, full.refused.body)).status).toBe(204);
    acknowledged.push(full.refused.key);

    // Read-only, then read-write again.
    await disk.readOnly();
    const ro = await deliverUntilRefused(agent, fx);
    acknowledged.push(...ro.accepted);
    expect(ro.response.status).toBe(503);
    const whileReadOnly = await readyz(agent);
    expect(whileReadOnly.status).toBe(503);
    expect(whileReadOnly.body.components.votes?.detail).toContain(`the state directory ${disk.directory} is read-only: nothing can be written there`);
    disk.readWrite();
    await until('/readyz 200 after the remount read-write', async () => (await readyz(agent)).status === 200);
    expect((await deliver(agent, ro.refused.body)).status).toBe(204);
    acknowledged.push(ro.refused.key);
    await until('every acknowledged vote rewarded', () => acknowledged.every((key) => calls.includes(key)));
  } finally {
    await agent.stop();
  }
  expect(calls.length, 'no vote rewarded twice').toBe(new Set(calls).size);
  expect(new Set(calls)).toEqual(new Set(acknowledged));
  expect(lines.filter((l) => /the next start records it/.test(l.message))).toEqual([]);
}

/**
 * A clean stop while the disk is full, with rewards finishing meanwhile; then a start after it was
 * freed. 120 votes: their completion records (42 bytes each) need more than the page the journal
 * may still have room in on a real disk.
 */
const VOTES_AT_STOP = 120;
async function stopOnFullDisk(disk: Disk): Promise<void> {
  const emu = await startTestEmulator();
  const fx = setupBot(emu);
  const calls: string[] = [];
  const lines: Line[] = [];
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const agent = await startAgent(disk, emu, fx.projectToken, calls, lines, gate);
  const keys: string[] = [];
  for (let i = 0; i < VOTES_AT_STOP; i += 1) {
    const vote = voteBody(fx);
    expect((await deliver(agent, vote.body)).status).toBe(204);
    keys.push(vote.key);
  }
  // The hooks are running when the disk fills; they succeed while it is full.
  disk.fill();
  open();
  await until('every reward', () => calls.length === VOTES_AT_STOP);
  await agent.stop();

  disk.free();
  const again: string[] = [];
  const restarted = await startAgent(disk, emu, fx.projectToken, again, []);
  await new Promise((resolve) => setTimeout(resolve, 300));
  await restarted.stop();
  expect(again, 'votes whose hooks had succeeded, rewarded again after the restart').toEqual([]);
  expect([...calls].sort()).toEqual([...keys].sort());
  expect(lines.filter((l) => l.level === 'error' && /could not close the vote ledger/.test(l.message))).toEqual([]);
  expect(lines.filter((l) => /could not record that a vote is finished/.test(l.message))).toEqual([]);
}

describe('the agent on a state directory that fills up and turns read-only (fake disk)', () => {
  const fakeFor = async (): Promise<Disk> => {
    const fake = fakeDisk();
    return {
      directory: await mkdtemp(join(tmpdir(), 'la-state-disk-')),
      fs: fake.fs,
      fill: () => fake.fill(),
      free: () => fake.free(),
      readOnly: async () => void (fake.readOnly = true),
      readWrite: () => void (fake.readOnly = false),
    };
  };

  it('/readyz, the metric and the status page say why while it cannot write, and it is ready again by itself; refused votes are rewarded once when re-sent', async () => {
    await scenario(await fakeFor());
  });

  it('a clean stop on a full disk and a restart fire no reward twice', async () => {
    await stopOnFullDisk(await fakeFor());
  });

  it('a stop while read-only says at error which votes will be rewarded again, and why; they are, once', async () => {
    const disk = await fakeFor();
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const calls: string[] = [];
    const lines: Line[] = [];
    let open: () => void = () => undefined;
    const agent = await startAgent(disk, emu, fx.projectToken, calls, lines, new Promise<void>((resolve) => (open = resolve)));
    const keys: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const vote = voteBody(fx);
      expect((await deliver(agent, vote.body)).status).toBe(204);
      keys.push(vote.key);
    }
    await disk.readOnly();
    open();
    await until('the 3 rewards', () => calls.length === 3);
    await until('the first record failure', () => lines.some((l) => l.level === 'warn' && l.message.startsWith('could not record that a vote is finished')));
    const first = lines.find((l) => l.message.startsWith('could not record that a vote is finished'))!;
    expect(first.fields.error).toMatch(/read-only file system/);
    await agent.stop();
    const closing = lines.find((l) => l.message === 'votes: could not close the vote ledger cleanly');
    expect(closing?.level).toBe('error');
    expect(closing?.fields.err).toContain(`the state directory ${disk.directory} is read-only: nothing can be written there; 3 vote(s) whose hooks succeeded (or gave up) are not recorded as done, so their hooks run again at the next start`);
    expect([...(closing?.fields.rewardedAgain as string[])].sort()).toEqual([...keys].sort());
    expect(lines.filter((l) => /the next start records it/.test(l.message))).toEqual([]);

    // What the line said happens: those three, and only those, run again.
    disk.readWrite();
    const again: string[] = [];
    const restarted = await startAgent(disk, emu, fx.projectToken, again, []);
    await until('the announced repeats', () => again.length === 3);
    await restarted.stop();
    expect([...again].sort()).toEqual([...keys].sort());
  });
});

const mounted: Tmpfs[] = [];
afterAll(() => {
  for (const fs of mounted.splice(0)) fs.unmount();
});

const probe = mountTmpfs(4 * 1024 * 1024);
if (typeof probe === 'string') {
  console.log(`[state-disk] SKIPPING the real tmpfs tests: ${probe}`);
} else {
  probe.unmount();
}

describe.skipIf(typeof probe === 'string')('the agent on a state directory that fills up and turns read-only (a real tmpfs)', () => {
  const realFor = (): Disk => {
    const fs = mountTmpfs(4 * 1024 * 1024);
    if (typeof fs === 'string') throw new Error(fs);
    mounted.push(fs);
    return { directory: fs.dir, fs: undefined, fill: () => fs.fill(), free: () => fs.free(), readOnly: () => fs.readOnly(), readWrite: () => fs.readWrite() };
  };

  it('/readyz says why while it cannot write, and it is ready again by itself; refused votes are rewarded once when re-sent', async () => {
    await scenario(realFor());
  });

  it('a clean stop on a full disk and a restart fire no reward twice', async () => {
    await stopOnFullDisk(realFor());
  });

  it('doctor says the same: how much room is left, no space left, read-only', async () => {
    const disk = realFor();
    const deps = { config: parseConfig({ service: { token: 'a.b.c' }, state: { directory: disk.directory } }), cwd: '/', now: Date.now } as unknown as DoctorDeps;
    expect(await stateDirectoryCheck.run(deps, new AbortController().signal)).toMatchObject({ status: 'ok', summary: expect.stringMatching(/is writable \(4\.0 MiB free\)/) });
    disk.fill();
    expect(await stateDirectoryCheck.run(deps, new AbortController().signal)).toMatchObject({
      status: 'fail',
      summary: `no space left on the device holding ${disk.directory}`,
      fix: expect.stringContaining('free space on that file system'),
      details: { problem: 'no_space' },
    });
    disk.free();
    await disk.readOnly();
    expect(await stateDirectoryCheck.run(deps, new AbortController().signal)).toMatchObject({ status: 'fail', summary: `the state directory ${disk.directory} is read-only: nothing can be written there`, fix: expect.stringContaining('remount it read-write') });
    disk.readWrite();
  });
});
