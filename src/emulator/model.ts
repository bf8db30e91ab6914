import type { Platform, ProjectType } from '../contract/limits.js';
import { issueProjectToken } from '../contract/project-token.js';
import type { EmulatorContext } from './context.js';
import { iso } from './clock.js';
import { randomToken } from './ids.js';
import type { ProjectRecord, UserRecord, EmulatorVoteRecord, WebhookRecord } from './state.js';

/**
 * State changes shared by the admin API and the service routes (a user's project creation, a vote
 * from the admin API), and the JSON shapes several routes answer with.
 */

/** Input of {@link addUser}. */
export interface NewUser {
  id?: string;
  username: string;
  platform_id?: string;
  avatar?: string | null;
  profile?: Partial<UserRecord['profile']>;
}

/** Adds a user; a missing `platform_id` gets a fresh Snowflake. */
export function addUser(emu: EmulatorContext, input: NewUser): UserRecord {
  const user: UserRecord = {
    id: input.id ?? emu.nextId(),
    username: input.username,
    platform_id: input.platform_id ?? emu.nextId(),
    avatar: input.avatar ?? null,
    created_at: emu.clock.now(),
    profile: {
      discriminator: '0',
      defAvatar: '0',
      social: {},
      supporter: false,
      certifiedDev: false,
      mod: false,
      webMod: false,
      admin: false,
      ...input.profile,
    },
  };
  emu.state.users.set(user.id, user);
  return user;
}

/** Input of {@link addProject}. */
export interface NewProject {
  id?: string;
  platform: Platform;
  type: ProjectType;
  platform_id?: string;
  name?: string;
  owner_user_id?: string | null;
  admin_user_ids?: string[];
  headline?: Record<string, string>;
  page_content?: Record<string, string>;
  tags?: string[];
  review_status?: string;
  bot?: Partial<ProjectRecord['bot']>;
}

const PLATFORM_NAMES: Record<Platform, string> = { discord: 'Discord', roblox: 'Roblox', minecraft: 'Minecraft' };

/** The description the platform would supply for a new listing (headline and page defaults). */
export function platformDescription(platform: Platform, type: ProjectType, name: string): string {
  return `${name} is a ${PLATFORM_NAMES[platform]} ${type.replace('_', ' ')} listed on the service.`;
}

/** Adds a project and issues its project token; returns both. */
export function addProject(emu: EmulatorContext, input: NewProject): { project: ProjectRecord; projectToken: string } {
  const platformId = input.platform_id ?? emu.nextId();
  const name = input.name ?? `${PLATFORM_NAMES[input.platform]} ${input.type.replace('_', ' ')} ${platformId.slice(-4)}`;
  const description = platformDescription(input.platform, input.type, name);
  const project: ProjectRecord = {
    id: input.id ?? emu.nextId(),
    platform: input.platform,
    type: input.type,
    platform_id: platformId,
    name,
    headline: input.headline ?? { en: description },
    page_content: input.page_content ?? { en: description.padEnd(300, '.') },
    tags: input.tags ?? [],
    review_status: input.review_status ?? 'approved',
    review_score: 0,
    review_count: 0,
    owner_user_id: input.owner_user_id ?? null,
    admin_user_ids: input.admin_user_ids ?? [],
    created_at: emu.clock.now(),
    commands: [],
    announcements: [],
    metrics: [],
    stats: { server_count: null, shard_count: null, shards: [] },
    current_metrics: {},
    bot: {
      discriminator: '0',
      avatar: null,
      defAvatar: null,
      lib: '',
      prefix: '/',
      website: null,
      support: null,
      github: null,
      guilds: [],
      invite: null,
      certifiedBot: false,
      vanity: null,
      donationbotguildid: '',
      ...input.bot,
    },
  };
  emu.state.projects.set(project.id, project);
  const projectToken = issueProjectToken(emu.signingKey, platformId, Math.floor(emu.clock.now() / 1000));
  emu.state.projectTokens.set(project.id, projectToken);
  return { project, projectToken };
}

/** True from Friday 00:00 to Sunday 23:59 UTC (weekend votes count double for bots). */
function isWeekend(ms: number): boolean {
  const day = new Date(ms).getUTCDay();
  return day === 5 || day === 6 || day === 0;
}

/** Input of {@link addVote}. */
export interface NewVote {
  project: ProjectRecord;
  user: UserRecord;
  weight?: number;
  created_at?: number;
}

/**
 * Records a vote in (created_at, seq) order and delivers `vote.create` to every webhook of the
 * project. Weight defaults to 2 on weekends for Discord bots, else 1.
 */
export function addVote(emu: EmulatorContext, input: NewVote): EmulatorVoteRecord {
  const createdAt = input.created_at ?? emu.clock.now();
  const { project, user } = input;
  const weekendBot = project.platform === 'discord' && project.type === 'bot' && isWeekend(createdAt);
  emu.state.voteSeq += 1;
  const vote: EmulatorVoteRecord = {
    id: emu.nextId(),
    seq: emu.state.voteSeq,
    project_id: project.id,
    user_id: user.id,
    platform_id: user.platform_id,
    weight: input.weight ?? (weekendBot ? 2 : 1),
    created_at: createdAt,
    expires_at: createdAt + emu.settings.voteExpirySeconds * 1000,
  };
  const votes = emu.state.votes;
  let index = votes.length;
  while (index > 0 && votes[index - 1]!.created_at > createdAt) index -= 1;
  votes.splice(index, 0, vote);

  const data = voteEventData(vote, project, user);
  for (const webhook of projectWebhooks(emu, project.id)) {
    void emu.deliveries.deliver(webhookTarget(webhook), 'vote.create', data);
  }
  return vote;
}

/** Every webhook of a project, application-made and integration-made. */
export function projectWebhooks(emu: EmulatorContext, projectId: string): WebhookRecord[] {
  return [...emu.state.webhooks.values()].filter((w) => w.project_id === projectId);
}

/** The delivery target of a webhook. */
export function webhookTarget(webhook: WebhookRecord) {
  return { url: webhook.url, secret: webhook.secret, project_id: webhook.project_id, webhook_id: webhook.id };
}

/** A new webhook secret (`whs_...`). */
export function newWebhookSecret(): string {
  return randomToken('whs_');
}

/** `project` of event payloads. */
export function eventProject(project: ProjectRecord) {
  return { id: project.id, type: project.type, platform: project.platform, platform_id: project.platform_id };
}

/** `user` of event payloads. */
export function eventUser(user: UserRecord) {
  return { id: user.id, platform_id: user.platform_id, name: user.username, avatar_url: user.avatar };
}

/** `data` of a `vote.create` event. */
function voteEventData(vote: EmulatorVoteRecord, project: ProjectRecord, user: UserRecord) {
  return {
    id: vote.id,
    weight: vote.weight,
    created_at: iso(vote.created_at),
    expires_at: iso(vote.expires_at),
    project: eventProject(project),
    user: eventUser(user),
  };
}

/** A vote record as `GET /projects/:id/votes` lists it. */
export function voteJson(vote: EmulatorVoteRecord) {
  return {
    user_id: vote.user_id,
    platform_id: vote.platform_id,
    weight: vote.weight,
    created_at: iso(vote.created_at),
    expires_at: iso(vote.expires_at),
  };
}

/** A project as `GET /projects` lists it. */
export function projectListItem(project: ProjectRecord) {
  return {
    id: project.id,
    platform_id: project.platform_id,
    name: project.name,
    platform: project.platform,
    type: project.type,
  };
}

/** Sums of vote weights: all time, and this UTC month of the emulator clock. */
export function voteTotals(emu: EmulatorContext, projectId: string): { total: number; month: number } {
  const now = new Date(emu.clock.now());
  const monthStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
  let total = 0;
  let month = 0;
  for (const vote of emu.state.votes) {
    if (vote.project_id !== projectId) continue;
    total += vote.weight;
    if (vote.created_at >= monthStart) month += vote.weight;
  }
  return { total, month };
}

/** A project as `GET /projects/:id` answers: `votes` counts this month, `votes_total` all time. */
export function projectDetail(emu: EmulatorContext, project: ProjectRecord) {
  const totals = voteTotals(emu, project.id);
  return {
    id: project.id,
    name: project.name,
    platform: project.platform,
    type: project.type,
    headline: englishHeadline(project),
    tags: project.tags,
    votes: totals.month,
    votes_total: totals.total,
    review_score: project.review_score,
    review_count: project.review_count,
  };
}

/** A user as `GET /users/@me` answers. */
export function userJson(user: UserRecord) {
  return {
    id: user.id,
    username: user.username,
    avatar: user.avatar,
    connections: [{ platform: 'discord', id: user.platform_id }],
  };
}

/** A project as the user endpoints list it. */
export function userProjectJson(project: ProjectRecord) {
  return { ...projectListItem(project), headline: englishHeadline(project), review_status: project.review_status };
}

/** The headline the single-string views show (v1 detail, user projects, v0 shortdesc): English, else the first locale's. */
export function englishHeadline(project: ProjectRecord): string {
  return project.headline.en ?? Object.values(project.headline)[0] ?? '';
}
