import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { FakeApplicationCommand, FakeDiscordRest, FakeDiscordRestState, FakeRestAnswer, FakeRestRequest } from './rest-types.js';

/** One answer of the fake. */
interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

const COMMANDS_PATH = /^\/applications\/(\d+)\/commands(?:\/(\d+))?$/;
/** The first command ID the fake hands out: a snowflake of 2024. */
const FIRST_COMMAND_ID = 1_300_000_000_000_000_000n;

/** The request's JSON body, or undefined when it is none. */
function json(body: string): unknown {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return undefined;
  }
}

/** Discord's error for a body it cannot take. */
const badBody = (what: string): Answer => ({ status: 400, body: { message: `Invalid Form Body: ${what}`, code: 50035 } });

class FakeDiscordRestServer implements FakeDiscordRest {
  url = '';
  readonly state: FakeDiscordRestState;
  readonly requests: FakeRestRequest[] = [];
  readonly refused: string[] = [];
  readonly #extra = new Map<string, FakeRestAnswer>();
  #commands: FakeApplicationCommand[] = [];
  #nextCommandId = FIRST_COMMAND_ID;
  #server: Server | undefined;

  constructor(state: FakeDiscordRestState) {
    this.state = state;
  }

  commands(): FakeApplicationCommand[] {
    return this.#commands.map((command) => ({ ...command }));
  }

  route(method: string, path: string, answer: FakeRestAnswer): void {
    this.#extra.set(`${method.toUpperCase()} ${path}`, answer);
  }

  async listen(port: number): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => this.#answer(req, res, Buffer.concat(chunks).toString('utf8')));
    });
    this.#server = server;
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    const address = server.address();
    this.url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/api`;
  }

  close(): Promise<void> {
    return new Promise<void>((resolve) => {
      if (!this.#server) return resolve();
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }

  #limits(): Record<string, string> {
    const resetAfter = this.state.resetAfterSeconds;
    return {
      'x-ratelimit-limit': '50',
      'x-ratelimit-bucket': 'fake-bucket',
      'x-ratelimit-reset-after': String(resetAfter),
      'x-ratelimit-reset': String(Date.now() / 1000 + resetAfter),
    };
  }

  #answer(req: IncomingMessage, res: ServerResponse, received: string): void {
    // Accept /api/v10/..., /api/v9/... and /api/... alike.
    const path = new URL(req.url ?? '/', 'http://fake').pathname.replace(/^\/api(\/v\d+)?/, '');
    const method = req.method ?? 'GET';
    const { status, body, headers } = this.#decide(req, method, path, received);
    this.requests.push({ method, path, authorization: req.headers.authorization, status, body: received });
    // 204 has no body, and so no content type (discord.js would try to read JSON from nothing).
    if (status === 204) res.writeHead(status, headers).end();
    else res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  }

  #decide(req: IncomingMessage, method: string, path: string, received: string): Answer {
    // An interaction's callback is authorised by the interaction's token in its path, not the bot's.
    const unauthenticated = path.startsWith('/interactions/');
    if (!unauthenticated && req.headers.authorization !== `Bot ${this.state.token}`) {
      return { status: 401, body: { message: '401: Unauthorized', code: 0 } };
    }
    const limits = this.#limits();
    if (this.state.remaining <= 0) {
      const retryAfter = String(Math.ceil(this.state.resetAfterSeconds));
      const retry = { 'x-ratelimit-remaining': '0', 'retry-after': retryAfter, 'x-ratelimit-scope': 'user' };
      const body = { message: 'You are being rate limited.', retry_after: this.state.resetAfterSeconds, global: false };
      return { status: 429, body, headers: { ...limits, ...retry } };
    }
    this.state.remaining -= 1;
    const headers = { ...limits, 'x-ratelimit-remaining': String(this.state.remaining) };
    const custom = this.#extra.get(`${method} ${path}`);
    const answer: Answer = custom ? custom(req, received) : this.#own(method, path, received);
    return { ...answer, headers: { ...headers, ...answer.headers } };
  }

  #own(method: string, path: string, received: string): Answer {
    const { state } = this;
    if (method === 'GET' && path === '/applications/@me') {
      const count = state.approximateGuildCount;
      const application = { id: state.applicationId, name: 'Fake Bot', approximate_guild_count: count };
      return { status: 200, body: { ...application, bot_public: true, flags: 0 } };
    }
    if (method === 'GET' && path === '/gateway') return { status: 200, body: { url: state.gatewayUrl } };
    if (method === 'GET' && path === '/gateway/bot') {
      const session_start_limit = { total: 1000, remaining: 999, reset_after: 14_400_000, max_concurrency: 16 };
      return { status: 200, body: { url: state.gatewayUrl, shards: state.recommendedShards, session_start_limit } };
    }
    const commands = COMMANDS_PATH.exec(path);
    // Another application's commands: the bot's token owns none of them.
    if (commands && commands[1] !== state.applicationId) return { status: 404, body: { message: 'Unknown Application', code: 10002 } };
    if (commands) {
      const answer = commands[2] === undefined ? this.#commandList(method, received) : this.#oneCommand(method, commands[2], received);
      if (answer) return answer;
    }
    const route = `${method} ${path}`;
    this.refused.push(route);
    const message = `The fake Discord does not implement ${route}: see docs/testing.md for the routes it has.`;
    return { status: 501, body: { message, code: 0 } };
  }

  #made(input: Record<string, unknown>, existing?: FakeApplicationCommand): FakeApplicationCommand {
    const id = existing?.id ?? String(this.#nextCommandId++);
    const version = String(this.#nextCommandId++);
    const base = { type: 1, description: '', ...existing, ...input };
    return { ...base, id, application_id: this.state.applicationId, version, name: String(base.name) } as FakeApplicationCommand;
  }

  #commandList(method: string, received: string): Answer | undefined {
    if (method === 'GET') return { status: 200, body: this.commands() };
    const body = json(received);
    if (method === 'PUT') {
      if (!Array.isArray(body) || !body.every(isNamed)) return badBody('a list of commands, each with a name');
      this.#commands = body.map((input) => this.#made(input, this.#commands.find((c) => c.name === input.name)));
      return { status: 200, body: this.commands() };
    }
    if (method === 'POST') {
      if (!isNamed(body)) return badBody('a command with a name');
      const existing = this.#commands.find((c) => c.name === body.name);
      const made = this.#made(body, existing);
      this.#commands = [...this.#commands.filter((c) => c !== existing), made];
      return { status: existing ? 200 : 201, body: made };
    }
    return undefined;
  }

  #oneCommand(method: string, id: string, received: string): Answer | undefined {
    const existing = this.#commands.find((c) => c.id === id);
    if (!existing) return { status: 404, body: { message: 'Unknown application command', code: 10063 } };
    if (method === 'GET') return { status: 200, body: { ...existing } };
    if (method === 'DELETE') {
      this.#commands = this.#commands.filter((c) => c !== existing);
      return { status: 204, body: undefined };
    }
    if (method === 'PATCH') {
      const body = json(received);
      if (typeof body !== 'object' || body === null || Array.isArray(body)) return badBody('the fields to change');
      const made = this.#made({ ...(body as Record<string, unknown>) }, existing);
      this.#commands = this.#commands.map((c) => (c === existing ? made : c));
      return { status: 200, body: made };
    }
    return undefined;
  }
}

function isNamed(value: unknown): value is Record<string, unknown> & { name: string } {
  return typeof value === 'object' && value !== null && typeof (value as { name?: unknown }).name === 'string';
}

/** How {@link startFakeDiscordRest} starts: the state's fields, and a port. */
export type FakeDiscordRestOptions = Partial<FakeDiscordRestState> & { port?: number };

/**
 * Starts a fake Discord REST API on 127.0.0.1 (see {@link FakeDiscordRest} for its routes), with
 * `X-RateLimit-*` headers and 429s when the bucket is empty.
 */
export async function startFakeDiscordRest(options: FakeDiscordRestOptions = {}): Promise<FakeDiscordRest> {
  const { port = 0, ...initial } = options;
  const rest = new FakeDiscordRestServer({
    applicationId: '300000000000000001',
    approximateGuildCount: 0,
    recommendedShards: 1,
    gatewayUrl: 'ws://127.0.0.1:1',
    token: 'fake-bot-token',
    remaining: 50,
    resetAfterSeconds: 1,
    ...initial,
  });
  await rest.listen(port);
  return rest;
}
