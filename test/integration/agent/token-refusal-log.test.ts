import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createListingAgent, type ListingAgent } from '../../../src/agent/agent.js';
import { createLogger } from '../../../src/log/logger.js';
import { createMemoryStore } from '../../../src/store/memory.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { waitFor } from './redis-fixture.js';

/**
 * A token the service refuses at the start is retried (5 s, 10 s, ...). The first refusal is
 * logged once at `error` with the fix (which setting, where it came from, how to check it), each
 * retry that meets the same refusal at most one short `warn` line with the count, and a change (a
 * different error, or success) is logged once.
 */

const agents: ListingAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.stop({ deadlineMs: 2_000 })));
});

interface Line {
  level: string;
  msg: string;
  [field: string]: unknown;
}

/** A pino logger (the daemon's own) whose lines the test reads. */
function readableLogger(secrets: string[]) {
  const lines: Line[] = [];
  let text = '';
  const destination = new Writable({
    write(chunk, _encoding, done) {
      text += chunk.toString();
      lines.push(JSON.parse(chunk.toString()) as Line);
      done();
    },
  });
  return { logger: createLogger({ level: 'debug', format: 'json', destination, secrets }), lines, text: () => text };
}

describe('a project token refused at the start', () => {
  it('is logged once at error with the fix, then one warn line per retry with the count, until the answer changes', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    // The service refuses twice, is down once, refuses once more, then answers.
    emu.admin.injectFault({ path: '/api/v1/projects/@me', status: 401, count: 2 });
    emu.admin.injectFault({ path: '/api/v1/projects/@me', status: 503, count: 1 });
    emu.admin.injectFault({ path: '/api/v1/projects/@me', status: 401, count: 1 });
    const log = readableLogger([fx.projectToken]);
    const agent = createListingAgent({
      config: { service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 }, health: { enabled: false } },
      store: createMemoryStore(),
      logger: log.logger,
      tokenSource: 'the LISTING_AGENT_SERVICE_TOKEN variable',
      reconnectDelaysMs: [10, 20, 40],
      transport: { retry: { maxAttempts: 1 } },
    });
    agents.push(agent);
    await agent.start();
    await waitFor('the agent running', () => agent.phase === 'running', 5_000);

    const about = log.lines.filter((line) => /token|service/.test(line.msg) && line.level !== 'debug');
    expect(about.map((line) => [line.level, line.msg, line.attempt])).toEqual([
      ['error', expect.stringContaining('the service refused the project token'), 1],
      ['warn', 'the service still refuses the project token', 2],
      ['warn', 'service not reachable', 3],
      ['error', expect.stringContaining('the service refused the project token'), 4],
      ['info', 'service reached', undefined],
    ]);
    const first = about[0]!;
    expect(first).toMatchObject({ status: 401, retryInMs: 10 });
    expect(first.fix).toEqual(expect.stringContaining('service.token'));
    expect(first.fix).toEqual(expect.stringContaining('the LISTING_AGENT_SERVICE_TOKEN variable'));
    expect(first.fix).toEqual(expect.stringContaining('listing-agent doctor'));
    expect(about[1]).toMatchObject({ status: 401, retryInMs: 20 });
    expect(about[4]).toMatchObject({ failedTries: 4, projectId: fx.projectId });
    // Never the token, nor any part of it.
    for (const part of fx.projectToken.split('.')) expect(log.text()).not.toContain(part);
  });

  it('says when the token names a project that no longer exists (404)', async () => {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    emu.admin.deleteProject(fx.projectId);
    const log = readableLogger([fx.projectToken]);
    const agent = createListingAgent({
      config: { service: { token: fx.projectToken, v1: emu.urls.v1, v0: emu.urls.v0 }, health: { enabled: false } },
      store: createMemoryStore(),
      logger: log.logger,
      reconnectDelaysMs: [10],
      transport: { retry: { maxAttempts: 1 } },
    });
    agents.push(agent);
    await agent.start();
    await waitFor('three tries', () => log.lines.filter((line) => line.msg.includes('refuse')).length >= 3, 5_000);
    const refusals = log.lines.filter((line) => line.msg.includes('refuse'));
    expect(refusals.map((line) => line.level)).toEqual(['error', 'warn', 'warn', ...refusals.slice(3).map(() => 'warn')]);
    expect(refusals[0]!.fix).toEqual(expect.stringContaining('no longer exists'));
    expect(refusals[0]!.fix).toEqual(expect.stringContaining('the configuration given to createListingAgent'));
  });
});
