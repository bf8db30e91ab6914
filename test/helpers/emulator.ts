import { afterEach } from 'vitest';
import { startEmulator, type EmulatorWithContext, type StartEmulatorOptions } from '../../src/emulator/index.js';
import type { Scope } from '../../src/contract/limits.js';
import { SCOPES } from '../../src/contract/limits.js';
import { call, type CallOptions, type TestResponse } from './http.js';

/** A running emulator with request shorthands relative to its bases. */
export interface TestEmulator extends EmulatorWithContext {
  v1(path: string, options?: CallOptions): Promise<TestResponse>;
  v0(path: string, options?: CallOptions): Promise<TestResponse>;
  adminCall(path: string, options?: CallOptions): Promise<TestResponse>;
  /** A request to `{origin}{path}` (the authorize page, `/`). */
  root(path: string, options?: CallOptions): Promise<TestResponse>;
}

const running: EmulatorWithContext[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((emulator) => emulator.close()));
});

/** Starts an emulator on 127.0.0.1:0 that closes after the test. */
export async function startTestEmulator(options: StartEmulatorOptions = {}): Promise<TestEmulator> {
  const emulator = await startEmulator(options);
  running.push(emulator);
  return Object.assign(emulator, {
    v1: (path: string, o?: CallOptions) => call(`${emulator.urls.v1}${path}`, o),
    v0: (path: string, o?: CallOptions) => call(`${emulator.urls.v0}${path}`, o),
    adminCall: (path: string, o?: CallOptions) => call(`${emulator.urls.admin}${path}`, o),
    root: (path: string, o?: CallOptions) => call(`${emulator.urls.origin}${path}`, o),
  });
}

/** What {@link setupBot} made. */
export interface BotFixture {
  ownerId: string;
  ownerPlatformId: string;
  projectId: string;
  platformId: string;
  projectToken: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  /** An OAuth access token of the owner for the project, with `scopes` (default: every scope). */
  accessToken: string;
  refreshToken: string;
}

/** An owner, a Discord bot project, an application and an OAuth grant, made through the admin API. */
export function setupBot(emulator: EmulatorWithContext, options: { scopes?: Scope[] } = {}): BotFixture {
  const owner = emulator.admin.createUser({ username: 'owner' });
  const { project, project_token } = emulator.admin.createProject({
    platform: 'discord',
    type: 'bot',
    owner_user_id: owner.id,
    name: 'Test Bot',
  });
  const redirectUri = 'http://127.0.0.1:1/callback';
  const app = emulator.admin.createApplication({ redirect_uris: [redirectUri] });
  const grant = emulator.admin.grantAuthorization({
    client_id: app.client_id,
    user_id: owner.id,
    project_id: project.id,
    scopes: options.scopes ?? [...SCOPES],
  });
  return {
    ownerId: owner.id,
    ownerPlatformId: owner.platform_id,
    projectId: project.id,
    platformId: project.platform_id,
    projectToken: project_token,
    clientId: app.client_id,
    clientSecret: app.client_secret,
    redirectUri,
    accessToken: grant.access_token,
    refreshToken: grant.refresh_token,
  };
}
