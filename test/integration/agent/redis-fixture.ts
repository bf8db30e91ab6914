import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestEmulator, BotFixture } from '../../helpers/emulator.js';
import { clientFor } from '../../helpers/client.js';
import { freePort } from '../../helpers/ports.js';
export { freePort };

/**
 * What the Redis agent tests share: free ports for webhook receivers (the service needs their URL
 * before the agents start, and the agents need the webhooks' secrets), and one webhook per agent.
 */

/** One receiver address per agent, each registered as a webhook of the project; every secret. */
export async function webhooksFor(emu: TestEmulator, fx: BotFixture, count: number): Promise<{ ports: number[]; secrets: string[] }> {
  const client = clientFor(emu, { accessToken: fx.accessToken, projectId: fx.projectId });
  const ports: number[] = [];
  const secrets: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const port = await freePort();
    const created = await client.webhooks.create({ label: `agent-${i}`, url: `http://127.0.0.1:${port}/webhooks/listing`, allowHttpLoopback: true });
    ports.push(port);
    secrets.push(created.secret);
  }
  return { ports, secrets };
}

/** A fresh temp directory. */
export function tempDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** Waits `ms`. */
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns true, or throws `what` after `timeoutMs`. */
export async function waitFor(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000, everyMs = 25): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}
