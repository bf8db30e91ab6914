import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../../src/config/loader.js';
import { MASK, maskConfig } from '../../../src/config/mask.js';
import { SECRET_PATHS } from '../../../src/config/schema.js';
import { TOKEN, json } from './files.js';

const SECRETS = {
  token: TOKEN,
  discord: 'DISCORD-BOT-SECRET',
  hook: 'HOOK-AUTH-SECRET',
  whs1: 'whs_FIRST-SECRET',
  whs2: 'whs_SECOND-SECRET',
  legacy: 'LEGACY-SHARED-SECRET',
};

function loaded() {
  const file = {
    $schema: './config.schema.json',
    service: { token: '${T}' },
    discord: { token: SECRETS.discord, applicationId: '123456789012345678' },
    votes: { enabled: true, pollInterval: '90s', hooks: [{ url: 'http://127.0.0.1:1/a' }, { url: 'http://127.0.0.1:1/b', authorization: SECRETS.hook, timeout: '1500ms' }] },
    webhooks: { enabled: true, listen: '[::1]:9000', secrets: [SECRETS.whs1, SECRETS.whs2], legacyAuthorization: SECRETS.legacy },
    health: { listen: '8080' },
  };
  return buildConfig({ file: { name: 'c.json', text: json(file) }, env: { T: SECRETS.token } }).config;
}

describe('maskConfig', () => {
  it('replaces every secret, list items and array-item fields included, and keeps nothing of them', () => {
    const masked = maskConfig(loaded());
    const text = JSON.stringify(masked);
    for (const secret of Object.values(SECRETS)) expect(text).not.toContain(secret);
    // Not even a piece of one (every secret here contains the word).
    expect(text).not.toContain('SECRET');
    expect(masked.service).toMatchObject({ token: MASK });
    expect(masked.discord).toEqual({ token: MASK, applicationId: '123456789012345678', apiBaseUrl: 'https://discord.com/api' });
    expect(masked.webhooks).toMatchObject({ secrets: [MASK, MASK], legacyAuthorization: MASK });
    expect((masked.votes as { hooks: unknown[] }).hooks).toEqual([
      { type: 'http', url: 'http://127.0.0.1:1/a', timeout: '10s', retries: 5 },
      { type: 'http', url: 'http://127.0.0.1:1/b', authorization: MASK, timeout: '1s500ms', retries: 5 },
    ]);
  });

  it('prints durations and listen addresses in their written form, and leaves $schema out', () => {
    const masked = maskConfig(loaded());
    expect(masked.votes).toMatchObject({ pollInterval: '1m30s', lookback: '0s' });
    expect(masked.stats).toMatchObject({ enabled: false, interval: '30m', sampleInterval: '5m', jitter: '0s', push: { listen: '127.0.0.1:9466', staleAfter: '10m' }, rest: { cacheTtl: '10m' } });
    expect(masked.webhooks).toMatchObject({ listen: '[::1]:9000', path: '/webhooks/listing' });
    expect(masked.health).toEqual({ enabled: true, listen: '127.0.0.1:8080', allowedHosts: [], statusPage: true, history: '1d' });
    expect(masked.$schema).toBeUndefined();
    // The written form reads back to the same configuration.
    const webhooks = { ...(masked.webhooks as object), secrets: ['whs_x'], legacyAuthorization: 'x'.repeat(16) };
    const written = { ...masked, service: { token: TOKEN }, discord: {}, webhooks, votes: { ...(masked.votes as object), hooks: [] } };
    const again = buildConfig({ file: { name: 'masked.json', text: JSON.stringify(written) }, env: {} });
    expect(again.config.votes.pollInterval).toBe(90_000);
    expect(again.config.webhooks.listen).toEqual({ host: '::1', port: 9000 });
  });

  it('knows every secret path the schema marks', () => {
    expect([...SECRET_PATHS].sort()).toEqual(['discord.token', 'health.adminToken', 'service.token', 'state.redis.password', 'state.redis.sentinel.password', 'state.redis.url', 'stats.push.key', 'votes.hooks[].authorization', 'votes.hooks[].secret', 'webhooks.legacyAuthorization', 'webhooks.secrets[]']);
  });
});
