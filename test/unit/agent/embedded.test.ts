import { EventEmitter } from 'node:events';
import { Client as ErisClient } from 'eris';
import { Client as OceanicClient } from 'oceanic.js';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { configWithShorthands, followBot } from '../../../src/agent/embedded.js';
import { ConfigError } from '../../../src/config/errors.js';

const TOKEN = 'aaa.bbb.ccc';
const bot = { any: 'bot' };

describe('the embedded shorthands', () => {
  it('puts token into service.token beside the other service settings', () => {
    expect(configWithShorthands({ token: TOKEN, config: { service: { v1: 'http://127.0.0.1:1/api/v1' } } }).service).toEqual({ v1: 'http://127.0.0.1:1/api/v1', token: TOKEN });
    expect(configWithShorthands({ token: TOKEN }).service).toEqual({ token: TOKEN });
  });

  it('accepts the token given twice with one value, and refuses two values', () => {
    expect(configWithShorthands({ token: TOKEN, config: { service: { token: TOKEN } } }).service?.token).toBe(TOKEN);
    expect(() => configWithShorthands({ token: TOKEN, config: { service: { token: 'x.y.z' } } })).toThrow(ConfigError);
    expect(() => configWithShorthands({ token: TOKEN, config: { service: { token: 'x.y.z' } } })).toThrow(/give the project token once/);
  });

  it('turns stats on when a bot is given, unless the config says otherwise', () => {
    expect(configWithShorthands({ token: TOKEN, discord: bot }).stats).toEqual({ enabled: true });
    expect(configWithShorthands({ token: TOKEN, discord: bot, config: { stats: { mode: 'patch' } } }).stats).toEqual({ mode: 'patch', enabled: true });
    expect(configWithShorthands({ token: TOKEN, discord: bot, config: { stats: { enabled: false } } }).stats).toEqual({ enabled: false });
    expect(configWithShorthands({ token: TOKEN }).stats).toBeUndefined();
  });
});

/** A stand-in for the agent as followBot drives it: counts starts and stops. */
function followedAgent() {
  const events = new EventEmitter();
  const agent = {
    phase: 'idle' as string,
    starts: 0,
    stops: 0,
    start: async () => {
      agent.starts += 1;
      agent.phase = 'running';
    },
    stop: async () => {
      agent.stops += 1;
      agent.phase = 'stopped';
      events.emit('stopped');
    },
    once: (event: 'stopped', listener: () => void) => events.once(event, listener),
  };
  return agent;
}

const logger = pino({ level: 'silent' });
const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('followBot with an Eris or Oceanic.js Client', () => {
  it('starts at ready, or on the next turn when the client is ready already', async () => {
    const agent = followedAgent();
    const client = new ErisClient('Bot x', { intents: ['guilds'] });
    followBot(agent, client, logger, () => undefined);
    await turn();
    expect(agent.starts).toBe(0);
    client.emit('ready');
    expect(agent.starts).toBe(1);

    const late = followedAgent();
    const ready = new OceanicClient({ auth: 'Bot x' });
    ready.ready = true;
    followBot(late, ready, logger, () => undefined);
    expect(late.starts).toBe(0);
    await turn();
    expect(late.starts).toBe(1);
  });

  it.each([
    ['Eris disconnect({})', () => new ErisClient('Bot x', { intents: ['guilds'] }), (c: ErisClient) => c.disconnect({}), 1],
    ['Eris disconnect({ reconnect: false })', () => new ErisClient('Bot x', { intents: ['guilds'] }), (c: ErisClient) => c.disconnect({ reconnect: false }), 1],
    ["Eris disconnect({ reconnect: 'auto' })", () => new ErisClient('Bot x', { intents: ['guilds'] }), (c: ErisClient) => c.disconnect({ reconnect: 'auto' }), 0],
    ['Eris disconnect({ reconnect: true })', () => new ErisClient('Bot x', { intents: ['guilds'] }), (c: ErisClient) => c.disconnect({ reconnect: true }), 0],
  ] as const)('stops the agent on %s only when the client does not come back (%#)', async (_, make, disconnect, stops) => {
    const agent = followedAgent();
    const client = make();
    followBot(agent, client, logger, () => undefined);
    disconnect(client);
    await turn();
    expect(agent.stops).toBe(stops);
  });

  it.each([
    ['Oceanic.js disconnect() (autoReconnect on, the default)', {}, (c: OceanicClient) => c.disconnect(), 0],
    ['Oceanic.js disconnect() with autoReconnect off', { autoReconnect: false }, (c: OceanicClient) => c.disconnect(), 1],
    ['Oceanic.js disconnect(false)', {}, (c: OceanicClient) => c.disconnect(false), 1],
    ['Oceanic.js disconnect(true)', { autoReconnect: false }, (c: OceanicClient) => c.disconnect(true), 0],
  ] as const)('stops the agent on %s only when the client does not come back', async (_, gateway, disconnect, stops) => {
    const agent = followedAgent();
    const client = new OceanicClient({ auth: 'Bot x', gateway });
    followBot(agent, client, logger, () => undefined);
    disconnect(client);
    await turn();
    expect(agent.stops).toBe(stops);
  });

  it('gives disconnect back and forgets ready once the agent stopped', async () => {
    const agent = followedAgent();
    const client = new ErisClient('Bot x', { intents: ['guilds'] });
    const original = client.disconnect;
    followBot(agent, client, logger, () => undefined);
    expect(client.disconnect).not.toBe(original);
    await agent.stop();
    expect(client.disconnect).toBe(original);
    client.emit('ready');
    expect(agent.starts).toBe(0);
  });
});
