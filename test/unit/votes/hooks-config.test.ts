import { describe, expect, it } from 'vitest';
import { configSchema, type ListingAgentConfigInput } from '../../../src/config/schema.js';
import { ValidationError } from '../../../src/errors.js';
import { defaultHookName, hooksFromConfig } from '../../../src/votes/hooks/index.js';

type HookInput = NonNullable<NonNullable<ListingAgentConfigInput['votes']>['hooks']>[number];

function hooksOf(hooks: HookInput[]) {
  return configSchema.parse({ service: { token: 'a.b.c' }, votes: { hooks } }).votes.hooks;
}

describe('hooksFromConfig', () => {
  it('makes one hook per entry, in order, named by type and position by default', () => {
    const hooks = hooksFromConfig(
      hooksOf([
        { url: 'http://127.0.0.1:9000/votes', secret: 'whs_abcdef', timeout: '2s', retries: 3 },
        { command: ['node', 'reward.js'] },
        { type: 'http', url: 'http://127.0.0.1:9001/', name: 'shop' },
      ]),
    );
    expect(hooks.map((hook) => [hook.name, hook.retries])).toEqual([
      ['http-1', 3],
      ['exec-2', 5],
      ['shop', 5],
    ]);
    expect(defaultHookName('exec', 0)).toBe('exec-1');
  });

  it('maps an empty list to no hooks', () => {
    expect(hooksFromConfig(hooksOf([]))).toEqual([]);
  });

  it('refuses duplicate names, naming both entries', () => {
    let error: unknown;
    try {
      hooksFromConfig(hooksOf([{ url: 'http://127.0.0.1:1/', name: 'exec-2' }, { command: ['true'] }, { command: ['x'], name: 'exec-2' }]));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ValidationError);
    const issues = (error as ValidationError).issues;
    expect(issues).toEqual([
      { path: 'votes.hooks[1].name', message: 'the default name "exec-2" is already the name of votes.hooks[0]: give each hook a unique name' },
      { path: 'votes.hooks[2].name', message: '"exec-2" is already the name of votes.hooks[0]: give each hook a unique name' },
    ]);
    expect((error as ValidationError).subject).toBe('config');
  });

  it('keeps the in-process hook name for the vote event', () => {
    expect(() => hooksFromConfig(hooksOf([{ command: ['x'], name: 'vote-event' }]))).toThrow(/votes\.hooks\[0\]\.name: "vote-event" is reserved/);
    expect(hooksFromConfig(hooksOf([{ command: ['x'], name: 'vote-event' }]), { reservedNames: [] })[0]!.name).toBe('vote-event');
  });

  it('points an exec hook that cannot start at its config entry', async () => {
    const [, hook] = hooksFromConfig(hooksOf([{ url: 'http://127.0.0.1:1/' }, { command: ['definitely-not-a-command-7f3a', '--token', 'hunter22'] }]));
    const vote = {
      key: '1:0',
      userId: '1',
      platformId: null,
      projectId: '8',
      weight: 1,
      createdAt: '1970-01-01T00:00:00.000Z',
      expiresAt: '1970-01-01T12:00:00.000Z',
      road: 'poll' as const,
    };
    await expect(hook!.run(vote, { idempotencyKey: vote.key, attempt: 1, signal: new AbortController().signal })).rejects.toThrow(
      'hook "exec-2": command not found: "definitely-not-a-command-7f3a": check votes.hooks[1].command',
    );
  });
});
