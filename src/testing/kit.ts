import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDuration } from '../config/duration.js';
import { startEmulator, type AdminVote, type EmulatorWithContext, type RunningEmulator } from '../emulator/index.js';
import { createSchedule, type Schedule, type ScheduleOptions } from '../runtime/scheduler.js';
import { startFakeDiscord, type FakeDiscord } from './discord.js';
import type { StartTestKitOptions, TestKit, TestKitAgentOptions, TestKitFault, TestKitProject, TestKitVoteInput } from './kit-types.js';

/** The votes poller's schedule, which a vote cast by the kit triggers. */
const VOTES_POLL = 'votes-poll';
/** The reminders' longest timer step in a kit: a moved clock is seen within this (real) time. */
const REMINDER_LOOK_MS = 25;

/** `12h`, `1h30m` or a number of seconds, as milliseconds; throws naming the argument when it is neither. */
function advanceMs(by: number | string): number {
  const ms = typeof by === 'number' ? by * 1000 : parseDuration(by);
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) {
    throw new TypeError(`advanceClock: ${JSON.stringify(by)} is neither a number of seconds (0 or more) nor a duration (30s, 12h, 1h30m)`);
  }
  return ms;
}

/** Two config objects merged one section deep: `kit`'s fields win inside each section. */
function mergeConfig(given: object, kit: Record<string, Record<string, unknown>>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...given };
  for (const [section, fields] of Object.entries(kit)) {
    const own = merged[section];
    merged[section] = typeof own === 'object' && own !== null ? { ...own, ...fields } : fields;
  }
  return merged;
}

/** The parts of a kit, made by {@link startTestKit}. */
interface KitParts {
  discord: FakeDiscord;
  emulator: EmulatorWithContext;
  project: TestKitProject;
  clock: { offsetMs: number; base: () => number };
  stateDirectory: string;
}

class RunningTestKit implements TestKit {
  readonly discord: FakeDiscord;
  readonly emulator: EmulatorWithContext;
  readonly project: TestKitProject;
  readonly #clock: KitParts['clock'];
  readonly #stateDirectory: string;
  readonly #schedules = new Set<Schedule>();
  #voters = 0;
  #closing: Promise<void> | undefined;

  constructor(parts: KitParts) {
    this.discord = parts.discord;
    this.emulator = parts.emulator;
    this.project = parts.project;
    this.#clock = parts.clock;
    this.#stateDirectory = parts.stateDirectory;
  }

  now = (): number => this.#clock.base() + this.#clock.offsetMs;

  advanceClock(by: number | string): void {
    this.#clock.offsetMs += advanceMs(by);
  }

  /** Real schedules on the kit's clock, remembered so that a vote can trigger the poll. */
  #scheduleFactory = (options: ScheduleOptions): Schedule => {
    const schedule = createSchedule(options);
    const kit = this.#schedules;
    return {
      get name() {
        return schedule.name;
      },
      get busy() {
        return schedule.busy;
      },
      start: () => {
        kit.add(schedule);
        schedule.start();
      },
      stop: () => {
        kit.delete(schedule);
        schedule.stop();
      },
      trigger: () => schedule.trigger(),
      nextRunAt: () => schedule.nextRunAt(),
    };
  };

  agentOptions<Config extends object = object>(config?: Config): TestKitAgentOptions<Config> {
    const kitConfig = {
      service: { v1: this.emulator.urls.v1, v0: this.emulator.urls.v0 },
      state: { directory: this.#stateDirectory },
      health: { enabled: false },
    };
    return {
      token: this.project.token,
      now: this.now,
      config: mergeConfig(config ?? {}, kitConfig) as TestKitAgentOptions<Config>['config'],
      votes: { schedules: this.#scheduleFactory, reminderLookMs: REMINDER_LOOK_MS },
    };
  }

  addGuild(options: { shard?: number; id?: string } = {}): string {
    const { gateway } = this.discord;
    if (options.shard === undefined || options.id !== undefined) return gateway.addGuild(options.id);
    if (!Number.isInteger(options.shard) || options.shard < 0 || options.shard >= gateway.shardCount) {
      const shards = `0 to ${gateway.shardCount - 1}; set shards in startTestKit`;
      throw new RangeError(`addGuild: shard ${options.shard} is not one of the kit's shards (${shards})`);
    }
    // Generated IDs fall round robin on the shards: at most shardCount tries land on the one asked.
    for (;;) {
      const id = gateway.addGuild();
      if (gateway.shardOf(id) === options.shard) return id;
      gateway.removeGuild(id);
    }
  }

  removeGuild(id: string): boolean {
    return this.discord.gateway.removeGuild(id);
  }

  vote(input: TestKitVoteInput = {}): AdminVote {
    const { admin } = this.emulator;
    const known = input.user === undefined ? undefined : this.emulator.context.state.users.get(input.user);
    const userId = known?.id ?? admin.createUser({ username: input.user ?? `voter-${++this.#voters}` }).id;
    const weight = input.weight ?? (input.weekend ? 2 : undefined);
    const vote = admin.castVote({ project_id: this.project.id, user_id: userId, ...(weight === undefined ? {} : { weight }) });
    // A poll in flight may have read the cursor before this vote: a second one starts after it.
    const poll = (schedule: Schedule) => schedule.trigger().then(() => schedule.trigger());
    for (const schedule of this.#schedules) if (schedule.name === VOTES_POLL) void poll(schedule).catch(() => undefined);
    return vote;
  }

  posts(): ReturnType<RunningEmulator['admin']['metrics']> {
    return this.emulator.admin.metrics(this.project.id);
  }

  postedServerCounts(): number[] {
    return this.posts()
      .map((post) => post.metrics.server_count)
      .filter((count): count is number => typeof count === 'number');
  }

  syncedCommands(): unknown[] {
    return this.emulator.admin.commands(this.project.id);
  }

  failService(fault: TestKitFault): void {
    this.emulator.admin.injectFault({
      ...(fault.status === undefined ? {} : { status: fault.status }),
      ...(fault.retryAfterSeconds === undefined ? {} : { retry_after: fault.retryAfterSeconds }),
      ...(fault.delayMs === undefined ? {} : { delay_ms: fault.delayMs }),
      ...(fault.reset === undefined ? {} : { reset: fault.reset }),
      ...(fault.count === undefined ? {} : { count: fault.count }),
      ...(fault.method === undefined ? {} : { method: fault.method }),
      ...(fault.path === undefined ? {} : { path: fault.path }),
    });
  }

  refusals(): string[] {
    const refused = this.discord.gateway.events.filter((event) => event.type === 'refused');
    const gateway = refused.map((event) => `gateway: ${event.detail ?? ''}`);
    return [...this.discord.rest.refused.map((route) => `REST: ${route}`), ...gateway];
  }

  environment(): Record<string, string> {
    return {
      LISTING_AGENT_SERVICE_TOKEN: this.project.token,
      LISTING_AGENT_SERVICE_V1: this.emulator.urls.v1,
      LISTING_AGENT_SERVICE_V0: this.emulator.urls.v0,
      LISTING_AGENT_DISCORD_API_BASE_URL: this.discord.restUrl,
      DISCORD_TOKEN: this.discord.token,
      DISCORD_API: this.discord.restUrl,
      DISCORD_GATEWAY: this.discord.gatewayUrl,
    };
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      for (const schedule of this.#schedules) schedule.stop();
      await Promise.all([this.discord.close(), this.emulator.close()]);
      await rm(this.#stateDirectory, { recursive: true, force: true });
    })();
    return this.#closing;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }
}

/**
 * Starts a fake Discord (REST and gateway) and the listing-service emulator on one clock, with an
 * owner and a listed bot project whose `platform_id` is the fake bot's application ID, for a test
 * of a bot's own code: its Client logs in to the fake Discord, its agent talks to the emulator.
 */
export async function startTestKit(options: StartTestKitOptions = {}): Promise<TestKit> {
  const clock = { offsetMs: 0, base: options.now ?? Date.now };
  const now = () => clock.base() + clock.offsetMs;
  const applicationId = options.applicationId ?? '300000000000000001';
  const ports = options.ports ?? {};
  const discord = await startFakeDiscord({
    ...options.gateway,
    shardCount: options.shards ?? 1,
    guilds: options.guilds ?? 3,
    applicationId,
    ...(options.botToken === undefined ? {} : { token: options.botToken }),
    ports: {
      ...(ports.discordRest ? { rest: ports.discordRest } : {}),
      ...(ports.discordGateway ? { gateway: ports.discordGateway } : {}),
    },
  });
  let emulator: EmulatorWithContext | undefined;
  try {
    const settings = options.emulatorSettings ? { settings: options.emulatorSettings } : {};
    emulator = await startEmulator({ now, ...settings, ...(ports.emulator ? { port: ports.emulator } : {}) });
    const owner = emulator.admin.createUser({ username: 'bot-owner' });
    const listed = { platform: 'discord', type: 'bot', platform_id: applicationId, owner_user_id: owner.id, name: 'Test Bot' } as const;
    const made = emulator.admin.createProject(listed);
    const project = { id: made.project.id, platformId: applicationId, token: made.project_token, ownerId: owner.id };
    const stateDirectory = await mkdtemp(join(tmpdir(), 'listing-agent-testkit-'));
    return new RunningTestKit({ discord, emulator, project, clock, stateDirectory });
  } catch (error) {
    await Promise.all([discord.close(), emulator?.close()]);
    throw error;
  }
}
