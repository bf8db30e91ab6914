import { describe, expect, it } from 'vitest';
import {
  CredentialError,
  ForbiddenError,
  NotFoundError,
  UnauthorizedError,
  UnprocessableEntityError,
} from '../../../src/api/errors.js';
import type { ApplicationCommand } from '../../../src/api/v1/commands.js';
import { ValidationError } from '../../../src/errors.js';
import { setupClientTest, v1Requests } from '../../helpers/client.js';
import { setupBot } from '../../helpers/emulator.js';

const setup = setupClientTest;


const PING: ApplicationCommand = { name: 'ping', description: 'Replies with pong', type: 1, contexts: [0, 1] };
const VOTE: ApplicationCommand = {
  name: 'vote',
  description: 'How to vote',
  name_localizations: { de: 'abstimmen' },
  options: [{ type: 3, name: 'site', description: 'Which site', required: false }],
};

describe('commands.set', () => {
  it('replaces the commands with each credential, passing unknown fields through, and an empty array clears', async () => {
    const { emu, fx, client } = await setup();
    const { application_token } = emu.admin.rotateApplicationToken(fx.clientId);
    await client({ projectToken: fx.projectToken }).commands.set([PING, VOTE]);
    expect(emu.admin.commands(fx.projectId)).toEqual([PING, VOTE]);
    await client({ accessToken: fx.accessToken }).commands.set([VOTE], fx.projectId);
    expect(emu.admin.commands(fx.projectId)).toEqual([VOTE]);
    await client({ accessToken: fx.accessToken, projectId: fx.projectId }).commands.set([PING]);
    expect(emu.admin.commands(fx.projectId)).toEqual([PING]);
    await client({ applicationToken: application_token }).commands.set([], fx.projectId);
    expect(emu.admin.commands(fx.projectId)).toEqual([]);
    expect(v1Requests(emu).map((r) => [r.method, r.path, r.status])).toEqual([
      ['PUT', '/api/v1/projects/@me/commands', 204],
      ['PUT', `/api/v1/projects/${fx.projectId}/commands`, 204],
      ['PUT', `/api/v1/projects/${fx.projectId}/commands`, 204],
      ['PUT', `/api/v1/projects/${fx.projectId}/commands`, 204],
    ]);
  });

  it('refuses a rule violation locally, naming the command and the field, and sends nothing', async () => {
    const { emu, fx, client } = await setup();
    const api = client({ projectToken: fx.projectToken }).commands;
    const error = await api.set([PING, { name: 'Ping', description: 'Capital letter' }]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).subject).toBe('request');
    expect((error as ValidationError).issues).toContainEqual({ path: '[1].name', message: 'must be lowercase (command "Ping")' });
    expect((error as Error).message).toContain('[1].name');

    const tooMany = Array.from({ length: 101 }, (_, i) => ({ name: `c${i}`, description: 'A command' }));
    await expect(api.set(tooMany)).rejects.toBeInstanceOf(ValidationError);
    await expect(api.set([{ name_localizations: { de: 'nur-deutsch' }, description: 'No English' }]))
      .rejects.toThrow(/English/);
    expect(v1Requests(emu)).toEqual([]);
  });

  it('raises 422 UnprocessableEntityError for a project that is not a bot (a rule only the service can check)', async () => {
    const { emu, fx, client } = await setup();
    const server = emu.admin.createProject({ platform: 'discord', type: 'server', owner_user_id: fx.ownerId });
    emu.admin.grantAuthorization({
      client_id: fx.clientId, user_id: fx.ownerId, project_id: server.project.id, scopes: ['project.information.write'],
    });
    const { application_token } = emu.admin.rotateApplicationToken(fx.clientId);
    const error = await client({ applicationToken: application_token }).commands.set([PING], server.project.id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UnprocessableEntityError);
    expect((error as UnprocessableEntityError).status).toBe(422);
    expect((error as UnprocessableEntityError).problem?.detail).toMatch(/bots/);
  });

  it('raises 403 without project.information.write, 404 for another project, 401 when revoked', async () => {
    const { emu, fx, client } = await setup(['project.information.read']);
    const api = client({ accessToken: fx.accessToken }).commands;
    await expect(api.set([PING], fx.projectId)).rejects.toSatisfy((e) => e instanceof ForbiddenError && e.status === 403);
    const other = setupBot(emu);
    await expect(api.set([PING], other.projectId)).rejects.toSatisfy((e) => e instanceof NotFoundError && e.status === 404);
    emu.admin.revokeUserAuthorizations(fx.ownerId, fx.clientId);
    await expect(api.set([PING], fx.projectId)).rejects.toSatisfy((e) => e instanceof UnauthorizedError && e.status === 401);
  });

  it('takes interface-typed commands such as discord.js toJSON() output (no index signature)', async () => {
    interface JsonOption { type: 3; name: string; description: string; required?: boolean }
    interface JsonCommand {
      name: string;
      description: string;
      name_localizations?: Partial<Record<'de' | 'en-US', string | null>> | null;
      options?: JsonOption[];
      default_member_permissions?: string | null;
    }
    const json: JsonCommand = { name: 'echo', description: 'Echoes', options: [{ type: 3, name: 'text', description: 'What to say' }] };
    const { emu, fx, client } = await setup();
    await client({ projectToken: fx.projectToken }).commands.set([json]);
    expect(emu.admin.commands(fx.projectId)).toEqual([json]);
  });

  it('refuses a project token with an explicit project ID locally', async () => {
    const { emu, fx, client } = await setup();
    await expect(client({ projectToken: fx.projectToken }).commands.set([PING], fx.projectId)).rejects.toBeInstanceOf(CredentialError);
    expect(v1Requests(emu)).toEqual([]);
  });

  it('is idempotent: a 502 is retried and the second attempt succeeds', async () => {
    const { emu, fx, client } = await setup();
    emu.admin.injectFault({ path: '/api/v1/projects/@me/commands', status: 502 });
    await client({ projectToken: fx.projectToken }).commands.set([PING]);
    expect(v1Requests(emu).map((r) => [r.status, r.fault])).toEqual([[502, true], [204, false]]);
    expect(emu.admin.commands(fx.projectId)).toEqual([PING]);
  });
});
