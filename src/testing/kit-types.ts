import type { AdminVote, EmulatorSettings, RunningEmulator } from '../emulator/index.js';
import type { ScheduleFactory } from '../runtime/scheduler.js';
import type { FakeDiscord } from './discord.js';
import type { FakeGatewayOptions } from './gateway-types.js';

/** Options of {@link startTestKit}. */
export interface StartTestKitOptions {
  /** Shards of the fake Discord (IDENTIFY must say this count; `GET /gateway/bot` recommends it). Default 1. */
  shards?: number;
  /** The bot's guilds at the start: a count of generated IDs spread round robin over the shards, or the IDs. Default 3. */
  guilds?: number | readonly string[];
  /** The bot token the fake Discord takes. Default `fake-bot-token`. */
  botToken?: string;
  /** The bot's application ID (and user ID); also the listed project's `platform_id`. Default `300000000000000001`. */
  applicationId?: string;
  /** The base clock, epoch ms. Default `Date.now`. `advanceClock` moves the kit's clock ahead of it. */
  now?: () => number;
  /** The emulator's tunable numbers (vote lifetime, rate limits...). Default: the contract's. */
  emulatorSettings?: Partial<EmulatorSettings>;
  /** Gateway pacing: HELLO's heartbeat interval, a delay or hold before READY and the GUILD_CREATEs. */
  gateway?: Pick<FakeGatewayOptions, 'heartbeatIntervalMs' | 'readyDelayMs' | 'guildCreateDelayMs' | 'hold'>;
  /** Ports to listen on, all on 127.0.0.1. Default 0 (free ports): tests never need fixed ones. */
  ports?: { discordRest?: number; discordGateway?: number; emulator?: number };
}

/** A vote {@link TestKit.vote} casts. */
export interface TestKitVoteInput {
  /** The voter: the emulator user ID of one cast before, or a new user with this username. Default: a new user `voter-<n>`. */
  user?: string;
  /** A weekend vote: it counts double (`weight` 2), as the service counts a bot's votes from Friday to Sunday. */
  weekend?: boolean;
  /** The weight, 1 to 100 (wins over `weekend`). Default 1, or 2 when the kit's clock is on a weekend. */
  weight?: number;
}

/** A fault of the listing service for the next matching requests ({@link TestKit.failService}). */
export interface TestKitFault {
  /** Answer with this status (`503`, `429`). */
  status?: number;
  /** With a 429 (or any status): the `Retry-After` seconds sent. */
  retryAfterSeconds?: number;
  /** Wait this long (real ms, at most 60 000) before answering: past the agent's timeout, a timeout. */
  delayMs?: number;
  /** Drop the connection instead of answering. */
  reset?: boolean;
  /** How many requests fail. Default 1. */
  count?: number;
  /** Only requests of this method. Default any. */
  method?: string;
  /** Only this path (`/api/v1/projects/@me/metrics`), or a prefix ending in `*`. Default any. */
  path?: string;
}

/** What the kit puts into `createListingAgent`: the service, the state folder and the clock of the kit. */
export interface TestKitAgentOptions<Config> {
  /** The listed project's token. */
  token: string;
  /** The kit's clock: give it to the agent so that `advanceClock` moves it too. */
  now: () => number;
  /** The given config, with `service` aimed at the emulator, `state.directory` a temporary folder and health off. */
  config: Config & TestKitAgentConfig;
  /** The poll schedule of the votes (a vote the kit casts is polled at once) and a short reminder timer step. */
  votes: { schedules: ScheduleFactory; reminderLookMs: number };
}

/** The config sections the kit sets. */
export interface TestKitAgentConfig {
  service: { v1: string; v0: string };
  state: { directory: string };
  health: { enabled: boolean };
}

/** The listed project the kit made for the bot. */
export interface TestKitProject {
  /** The project's ID in the listing service. */
  id: string;
  /** Its `platform_id`: the bot's application ID. */
  platformId: string;
  /** The project token (what `createListingAgent({ token })` takes). */
  token: string;
  /** Its owner's user ID. */
  ownerId: string;
}

/** A running kit: a fake Discord and the listing-service emulator on one clock, with a project for the bot. */
export interface TestKit {
  readonly discord: FakeDiscord;
  readonly emulator: RunningEmulator;
  readonly project: TestKitProject;
  /** The kit's clock (epoch ms): the emulator's, and the agent's when it is given `agentOptions().now`. */
  now(): number;
  /** Moves the clock of the emulator and of the agent ahead by `by`: seconds, or a duration (`12h`, `1h30m`). */
  advanceClock(by: number | string): void;
  /**
   * The options for `createListingAgent`: spread them in, beside `discord`. `config` is merged
   * section by section into the kit's (`votes`, `stats`...; the kit's `service` and `state` win).
   */
  agentOptions<Config extends object = object>(config?: Config): TestKitAgentOptions<Config>;
  /** The bot joins a guild (on `shard` when given): GUILD_CREATE to that shard. Returns the guild ID. */
  addGuild(options?: { shard?: number; id?: string }): string;
  /** The bot leaves a guild: GUILD_DELETE. False when it was not in it. */
  removeGuild(id: string): boolean;
  /** Casts a vote for the project (the listing service's side), and has the agent poll for it at once. */
  vote(input?: TestKitVoteInput): AdminVote;
  /** The server counts the agent posted, oldest first. */
  postedServerCounts(): number[];
  /** Every stats post as the emulator applied it (source, time, payload). */
  posts(): ReturnType<RunningEmulator['admin']['metrics']>;
  /** The commands the agent synced to the listing, as the service holds them. */
  syncedCommands(): unknown[];
  /** The listing service fails the next matching requests: a 5xx, a 429, a delay past a timeout, a reset. */
  failService(fault: TestKitFault): void;
  /** What the fake Discord refused because it cannot imitate it (REST routes, gateway opcodes); empty when all went well. */
  refusals(): string[];
  /** The settings a bot process needs, as environment variables (what `listing-agent emulator --discord` prints). */
  environment(): Record<string, string>;
  /** Stops the emulator and the fake Discord, and removes the temporary state folder. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}
