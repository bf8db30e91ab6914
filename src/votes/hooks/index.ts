import type { Dispatcher } from 'undici';
import { urlCredentialForms } from '../../api/redact.js';
import type { ListingAgentConfig } from '../../config/schema.js';
import { ValidationError, type FieldIssue } from '../../errors.js';
import type { VoteHook } from '../types.js';
import type { HookKind } from './body.js';
import { createExecHook } from './exec.js';
import { createHttpHook } from './http.js';
import { IN_PROCESS_HOOK_NAME } from './in-process.js';

export { voteHookBody, voteHookEnvironment, type HookKind, type VoteHookBody } from './body.js';
export { VoteHookError } from './errors.js';
export { createExecHook, type ExecHookOptions } from './exec.js';
export { createHttpHook, type HttpHookOptions } from './http.js';
export { createInProcessHook, type InProcessHookOptions, type VoteListener } from './in-process.js';

/** The `votes.hooks` list of a validated configuration. */
export type HookConfigs = ListingAgentConfig['votes']['hooks'];

/** Options of {@link hooksFromConfig}: what the configuration cannot say. */
export interface HooksFromConfigOptions {
  /**
   * The base environment of every exec hook, under the vote's variables. The daemon passes `PATH`,
   * `HOME`, `LANG` and `TZ` of its own environment (less a variable the config reads); an
   * embedded bot passes what it wants its commands to see. Default: empty (a command is then looked
   * up on the system's default `PATH`).
   */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * Where the names an exec hook lists (`votes.hooks[].env`) are copied from, over the base: the
   * daemon passes its environment less its own credentials (`LISTING_AGENT_*`, `LISTING_OAUTH_*`,
   * a variable the config reads); an embedded bot may pass `process.env`. A listed name that is
   * not set there is left out. Default: none, so a hook gets no listed name beyond `env`.
   */
  parentEnv?: Readonly<Record<string, string | undefined>>;
  /** The working directory of exec hooks. Default: the agent's. */
  cwd?: string;
  /** The undici dispatcher of http hooks. Default: undici's global dispatcher. */
  dispatcher?: Dispatcher;
  /** The clock of http hooks' signatures, in epoch milliseconds. Default `Date.now`. */
  now?: () => number;
  /**
   * Names taken by hooks made elsewhere, which config hooks may not take. Default
   * `['vote-event']` (the in-process hook of the `vote` event).
   */
  reservedNames?: readonly string[];
  /** Where the list is in the config, for messages. Default `votes.hooks` (`votes.reminders.hooks` for the reminders'). */
  configPath?: string;
  /**
   * Values kept out of every hook's error texts, besides each hook's own credentials: the agent
   * passes every credential form of its configuration (`secretValues`). Default: none.
   */
  secrets?: readonly string[];
  /**
   * What the hooks carry (an http hook's body `type`, an exec hook's `LISTING_HOOK_TYPE`): the
   * reminders pass `reminder` for `votes.reminders.hooks`. Default `vote`.
   */
  kind?: HookKind;
}

/** The variables of `names` that `parentEnv` sets. */
function listedVariables(names: readonly string[], parentEnv: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = parentEnv[name];
    if (value !== undefined) out[name] = value;
  }
  return out;
}

/** The default name of the hook at `index` (0-based): `http-1`, `exec-2`, ... by position. */
export function defaultHookName(type: 'http' | 'exec', index: number): string {
  return `${type}-${index + 1}`;
}

/**
 * The name of each hook of a `votes.hooks` list (a hook without `name` is named by its type and
 * position: `http-1`, `exec-2`), and a problem for each that is reserved or taken by an earlier
 * one: names must be unique (they key dead letters and metrics).
 */
export function hookNameProblems(
  hooks: HookConfigs,
  rules: Pick<HooksFromConfigOptions, 'reservedNames' | 'configPath'> = {},
): { names: string[]; problems: FieldIssue[] } {
  const reserved = new Set(rules.reservedNames ?? [IN_PROCESS_HOOK_NAME]);
  const list = rules.configPath ?? 'votes.hooks';
  const firstIndex = new Map<string, number>();
  const problems: FieldIssue[] = [];
  const names = hooks.map((hook, index) => {
    const name = hook.name ?? defaultHookName(hook.type, index);
    const path = `${list}[${index}].name`;
    const named = hook.name === undefined ? `the default name "${name}"` : `"${name}"`;
    const earlier = firstIndex.get(name);
    if (reserved.has(name)) {
      problems.push({ path, message: `${named} is reserved for a built-in hook: choose another name` });
    } else if (earlier !== undefined) {
      problems.push({ path, message: `${named} is already the name of ${list}[${earlier}]: give each hook a unique name` });
    } else {
      firstIndex.set(name, index);
    }
    return name;
  });
  return { names, problems };
}

/**
 * The hooks of a validated `votes.hooks` list, in order, named as {@link hookNameProblems} says.
 *
 * @throws ValidationError (subject `config`) naming each `votes.hooks[i].name` that collides.
 */
export function hooksFromConfig(hooks: HookConfigs, options: HooksFromConfigOptions = {}): VoteHook[] {
  const list = options.configPath ?? 'votes.hooks';
  const reserved = options.reservedNames ? { reservedNames: options.reservedNames } : {};
  const { names, problems } = hookNameProblems(hooks, { ...reserved, configPath: list });
  if (problems.length > 0) throw new ValidationError('config', list, problems);

  return hooks.map((hook, index) => {
    const name = names[index]!;
    if (hook.type === 'http') {
      return createHttpHook({
        name,
        url: hook.url,
        ...(hook.secret === undefined ? {} : { secret: hook.secret }),
        ...(hook.authorization === undefined ? {} : { authorization: hook.authorization }),
        timeoutMs: hook.timeout,
        retries: hook.retries,
        ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
        ...(options.now ? { now: options.now } : {}),
        ...(options.secrets ? { secrets: options.secrets } : {}),
        ...(options.kind ? { kind: options.kind } : {}),
      });
    }
    const listed = listedVariables(hook.env ?? [], options.parentEnv ?? {});
    return createExecHook({
      name,
      command: hook.command,
      timeoutMs: hook.timeout,
      retries: hook.retries,
      env: { ...options.env, ...listed },
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      configPath: `${list}[${index}]`,
      ...(options.kind ? { kind: options.kind } : {}),
      // A listed DATABASE_URL's password never shows in what the command prints either.
      secrets: [...(options.secrets ?? []), ...Object.values(listed).flatMap(urlCredentialForms)],
    });
  });
}
