import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createListingClient, type ListingClient } from '../../api/client.js';
import { createFileTokenStore } from '../../api/oauth/token-store.js';
import type { LoadedConfig } from '../../config/loader.js';
import { secretValues } from '../../config/mask.js';
import { errorMessage, ListingAgentError } from '../../errors.js';
import { createLogger } from '../../log/logger.js';
import { stateDirectory } from '../../config/state-directory.js';
import { createVotePipeline } from '../../votes/pipeline.js';
import { createWebhookReceiver, optionalPlatformId, receiverSettings } from '../../webhooks/receiver.js';
import {
  createWebhookSecrets,
  readSecretFile,
  recordRotatedSecret,
  secretFilePath,
  DEFAULT_SECRET_GRACE_MS,
} from '../../webhooks/secrets.js';
import { withRotatedSecret } from '../../webhooks/secrets-file.js';
import { readRedisSecrets, updateRedisSecrets } from '../../webhooks/secrets-redis.js';
import { parseCommandArgs } from '../args.js';
import { unreceivedVotes } from '../../agent/votes-capabilities.js';
import { loadCommandConfig } from '../command-config.js';
import { EXIT, UsageError, type CliIo } from '../io.js';
import { runSubcommand } from '../subcommands.js';
import { keepProcessAlive } from '../keep-alive.js';
import { cliAgentId, cliState } from '../state.js';
import { STOP_DEADLINE_MS } from './run.js';
import { daemonHookOptions } from '../hook-environment.js';
import { runWebhooksTestCommand } from './webhooks-test.js';

/**
 * Where `webhooks rotate` reads the OAuth access token when no `--access-token-file` is given
 * (not `LISTING_AGENT_*`: it is no config field).
 */
const ACCESS_TOKEN_VARIABLE = 'LISTING_OAUTH_ACCESS_TOKEN';

export const WEBHOOKS_HELP = `Usage: listing-agent webhooks <subcommand> [options]

The signed webhook receiver.

Subcommands:
  serve                       run only the receiver, the vote pipeline and the reward hooks
                              of the config (no poller, stats or commands) until SIGTERM
  rotate --webhook ID         give the webhook a new secret (through the API, with an OAuth
         [--project ID]       access token) and write it to the secret file (to Redis with
         [--access-token-file F]  state.redis), where running receivers pick it up at once
  test --url U --secret S     send a signed test delivery to any URL (see 'webhooks test --help')

Options (serve, rotate):
  -c, --config FILE   the JSON config (default: LISTING_AGENT_CONFIG, else LISTING_AGENT_* variables)
  -h, --help          show this help

rotate needs an OAuth access token with project.webhooks.write, never on the command line:
--access-token-file F (the token alone, or a token file saved by createFileTokenStore) or the
${ACCESS_TOKEN_VARIABLE} environment variable. The project: --project, else the token
file's, else the one the config's project token names. The
secret file is <state.directory>/webhook-secrets.json (mode 0600); the webhook's previous secret
from that file stays valid for ${DEFAULT_SECRET_GRACE_MS / 60_000} minutes. A secret written in
webhooks.secrets stays valid until you remove it there. No secret is ever printed.

serve takes the state directory's lock, like 'run': run one or the other on a directory.
With state.redis it takes no lock: it records votes in the Redis vote ledger that every agent
of the bot shares (a vote delivered to two receivers is rewarded once), keeps v0 vote anchors
in Redis, and runs the reward stream hook when votes.stream.enabled. Its agent ID is
state.redis.agentId, else <hostname>/<pid>: give it its own beside a 'run' agent. Redis must
answer within 5 s at the start.

With state.redis, rotate stores the new secret in Redis (webhooks:secrets) instead of the file,
and every agent's receiver accepts it at once; integration secrets go there too. rotate asks
Redis before it rotates; if Redis fails after the rotation, the secret goes to this machine's
file and rotate exits 1 saying so. Receivers still read their machine's file beside Redis.

Exit codes: 0 done (serve: stopped cleanly), 1 a failure (the port, the state directory, the
service, Redis not answering), 2 usage error, 78 invalid configuration.
`;

async function load(io: CliIo, sub: string, file: string | undefined): Promise<LoadedConfig | number> {
  if (file === '') throw new UsageError('--config needs a file path', `webhooks ${sub}`);
  return loadCommandConfig(io, `webhooks ${sub}`, file);
}

/** Finds the project ID for v0 votes, retrying in the background until found or stopped; a failure is told once until it changes. */
function projectFinder(client: ListingClient, onError: (message: string) => void): { id(): string | undefined; stop(): void } {
  let id: string | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let lastError: string | undefined;
  const attempt = (delayMs: number) => {
    client.projects.get().then(
      (project) => void (id = project.id),
      (error: unknown) => {
        const message = errorMessage(error);
        if (message !== lastError) onError(message);
        lastError = message;
        if (!stopped) timer = setTimeout(() => attempt(Math.min(delayMs * 2, 300_000)), delayMs);
      },
    );
  };
  attempt(5_000);
  return {
    id: () => id,
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

async function runServe(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs('webhooks serve', argv, { config: { type: 'string', short: 'c' } });
  if (values.help) return help(io);
  const loaded = await load(io, 'serve', values.config as string | undefined);
  if (typeof loaded === 'number') return loaded;
  const { config } = loaded;
  const directory = stateDirectory(config, io.cwd);
  const file = secretFilePath(directory);
  const { level, format } = config.log;
  const logger = createLogger({ level, format, destination: io.logStream, isTTY: io.isTTY, secrets: secretValues(config) });
  // With state.redis this receiver is one more agent on the shared ledger, named like 'run' names one.
  const agentId = config.state.redis?.agentId ?? cliAgentId(io);
  await using state = cliState(config, io, { agentId, logger: logger.child({ component: 'redis' }) });
  // Hooks first: a bad hook is a configuration error, before any file, port or connection is touched.
  const hooks = state.hooks(daemonHookOptions(io, loaded.sources.env));
  if (config.webhooks.secrets.length === 0 && config.webhooks.legacyAuthorization === undefined) {
    const redis = await state.redis();
    const inFile = (await readSecretFile(file).catch(() => undefined))?.secrets.length ?? 0;
    const inRedis = redis ? ((await readRedisSecrets(redis).catch(() => undefined))?.secrets.length ?? 0) : 0;
    const stored = [inFile, inRedis];
    if (stored[0] === 0 && stored[1] === 0) {
      const set = 'set webhooks.secrets (LISTING_AGENT_WEBHOOKS_SECRETS) or webhooks.legacyAuthorization';
      io.stderr(`listing-agent webhooks serve: no webhook secret: ${set}, or rotate one into ${redis ? state.description : file}\n`);
      return EXIT.config;
    }
  }
  // The receiver feeds the pipeline whatever webhooks.enabled says: its votes need a hook, as run's do.
  const unreceived = unreceivedVotes({ ...config, webhooks: { ...config.webhooks, enabled: true } }, { mode: 'daemon' });
  if (unreceived !== undefined) {
    io.stderr(`listing-agent webhooks serve: refusing to start: invalid configuration: ${unreceived.path}: ${unreceived.message}\n`);
    return EXIT.config;
  }
  // File: the state directory's lock, like 'run'. Redis: the store (v0 anchors) and ledger there.
  const store = await state.store();
  const ledger = await state.ledger();
  const client = createListingClient({ projectToken: config.service.token, v1BaseUrl: config.service.v1, v0BaseUrl: config.service.v0 });
  const pipeline = createVotePipeline({ ledger, hooks, logger, now: Date.now });
  const redis = await state.redis();
  const secrets = createWebhookSecrets({ configured: config.webhooks.secrets, file, ...(redis ? { redis } : {}), logger });
  // v0 votes do not name the service project: look it up once (only they need it).
  const unreachable = 'cannot reach the service for the project ID; legacy votes are answered 503 until it can';
  const project =
    config.webhooks.legacyAuthorization === undefined ? undefined : projectFinder(client, (err) => logger.warn({ err }, unreachable));
  let release: (() => void) | undefined;
  try {
    await pipeline.start();
    await secrets.start();
    const receiver = createWebhookReceiver({
      ...receiverSettings(config.webhooks),
      secrets,
      pipeline,
      projectId: () => project?.id(),
      ...optionalPlatformId(config.service.token),
      anchorStore: store,
      logger,
    });
    const url = await receiver.start();
    logger.info({ state: state.description, ledger: ledger.describe() }, 'webhooks serve: votes are recorded here');
    const names = hooks.map((h) => h.name).join(', ') || 'none';
    io.stdout(`listing-agent webhooks serve: receiving at ${url} (hooks: ${names}); SIGTERM or Ctrl-C stops\n`);
    // Up until told to stop, whatever socket or timer is left (see keepProcessAlive).
    release = keepProcessAlive();
    const signal = await io.stopRequested;
    logger.info({ signal, deadlineMs: STOP_DEADLINE_MS }, 'stopping');
    const deadline = Date.now() + STOP_DEADLINE_MS - 500;
    await receiver.stop({ deadline });
    await pipeline.stop(deadline);
    return EXIT.ok;
  } finally {
    project?.stop();
    secrets.close();
    await pipeline.stop(Date.now()).catch(() => undefined);
    await ledger.close().catch((error: unknown) => logger.warn({ err: errorMessage(error) }, 'could not close the vote ledger cleanly'));
    await client.close().catch(() => undefined);
    // The store (releasing the lock), then the Redis connection: after every user of them.
    await state.close();
    release?.();
  }
}

/** The access token and the project it names (a token store file knows it), never from argv. */
async function accessToken(io: CliIo, tokenFile: string | undefined): Promise<{ token: string; projectId?: string }> {
  if (tokenFile === undefined) {
    const token = io.env[ACCESS_TOKEN_VARIABLE]?.trim();
    const needs = `rotate needs an OAuth access token: --access-token-file F, or the ${ACCESS_TOKEN_VARIABLE} variable`;
    if (!token) throw new UsageError(needs, 'webhooks rotate');
    return { token };
  }
  const path = resolve(io.cwd, tokenFile);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? errorMessage(error);
    throw new ListingAgentError('token_file', `cannot read the access token file ${path}: ${reason}`);
  }
  if (text.trimStart().startsWith('{')) {
    const tokens = await createFileTokenStore(path).load();
    if (tokens === undefined) throw new ListingAgentError('token_file', `the access token file ${path} is empty`);
    return { token: tokens.accessToken, ...(tokens.project ? { projectId: tokens.project.id } : {}) };
  }
  const token = text.trim();
  if (token === '') throw new ListingAgentError('token_file', `the access token file ${path} is empty`);
  return { token };
}

async function runRotate(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs('webhooks rotate', argv, {
    config: { type: 'string', short: 'c' },
    webhook: { type: 'string' },
    project: { type: 'string' },
    'access-token-file': { type: 'string' },
  });
  if (values.help) return help(io);
  const webhookId = values.webhook as string | undefined;
  if (!webhookId) throw new UsageError('give the webhook to rotate: --webhook ID (listed by the API, webhooks.list)', 'webhooks rotate');
  const credential = await accessToken(io, values['access-token-file'] as string | undefined);
  const loaded = await load(io, 'rotate', values.config as string | undefined);
  if (typeof loaded === 'number') return loaded;
  const { config } = loaded;
  const bases = { v1BaseUrl: config.service.v1, v0BaseUrl: config.service.v0 };
  let projectId = (values.project as string | undefined) ?? credential.projectId;
  if (projectId === undefined) {
    // The config's own project: what the project token names.
    await using own = createListingClient({ projectToken: config.service.token, ...bases });
    projectId = (await own.projects.get()).id;
  }
  const file = secretFilePath(stateDirectory(config, io.cwd));
  await using state = cliState(config, io);
  // Redis first: one that cannot be reached stops the command before the webhook is rotated.
  const redis = await state.redis();
  await using client = createListingClient({ accessToken: credential.token, projectId, ...bases });
  const { secret } = await client.webhooks.rotate(webhookId, projectId);
  const grace = `stays valid for ${DEFAULT_SECRET_GRACE_MS / 60_000} minutes; if it is in webhooks.secrets, remove it there`;
  if (redis !== undefined) {
    try {
      await updateRedisSecrets(redis, (content) => withRotatedSecret(content, { webhookId, secret }, Date.now()));
      const everyReceiver = 'every running receiver sharing it uses it at once';
      io.stdout(`Rotated webhook ${webhookId}: the new secret is in ${state.description}; ${everyReceiver}.\n`);
      io.stdout(`Its previous secret there ${grace}.\n`);
      return EXIT.ok;
    } catch (error) {
      // Never lose the only copy: keep it in this machine's file, and say what to do.
      const instead = `the new secret goes to ${file} on this machine instead`;
      io.stderr(`listing-agent webhooks rotate: the webhook was rotated, but ${errorMessage(error)}; ${instead}\n`);
    }
  }
  try {
    await recordRotatedSecret(file, { webhookId, secret });
  } catch (error) {
    // The only copy of the new secret is lost with this process: say so, never print it.
    const lost = 'the new secret was not kept: fix that and rotate again';
    io.stderr(`listing-agent webhooks rotate: the webhook was rotated, but ${errorMessage(error)}; ${lost}\n`);
    return EXIT.failure;
  }
  io.stdout(`Rotated webhook ${webhookId}: the new secret is in ${file}; a running receiver uses it at once.\n`);
  io.stdout(`Its previous secret in that file ${grace}.\n`);
  if (redis !== undefined) {
    const copy = `copy ${file} to the state.directory of every other agent's machine, or rotate again once Redis takes it`;
    io.stdout(`Only this machine's agent has it: ${copy}.\n`);
    return EXIT.failure;
  }
  return EXIT.ok;
}

function help(io: CliIo): number {
  io.stdout(WEBHOOKS_HELP);
  return EXIT.ok;
}

/** `listing-agent webhooks <serve|rotate|test>`. */
export function runWebhooksCommand(argv: string[], io: CliIo): Promise<number> {
  // The service, the port, the state directory or a hook said no: one line, never a stack trace.
  return runSubcommand(argv, io, {
    command: 'webhooks',
    help: WEBHOOKS_HELP,
    subcommands: { serve: runServe, rotate: runRotate, test: runWebhooksTestCommand },
    oneLineErrors: true,
  });
}
