import { PLATFORM_TYPES, SNOWFLAKE_PATTERN, type Platform, type ProjectType } from '../../contract/limits.js';
import { headlineProblem, pageContentProblem } from '../../contract/project-edit.js';
import { authorizeUser } from '../auth.js';
import type { Reply, RequestContext } from '../http.js';
import { fail, json, readJsonObject } from '../http.js';
import { addProject, userJson, userProjectJson } from '../model.js';
import type { Route } from '../router.js';
import { canManageProject } from '../state.js';

/** Roblox universe and place IDs: 1 to 20 digits. */
const ROBLOX_ID_PATTERN = /^\d{1,20}$/;
/** One DNS label: letters, digits and inner hyphens, at most 63 characters. */
const HOST_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

/**
 * True when a Minecraft server address could be reached: a host name with at least one dot (or
 * an IPv4 address), optionally `:port` with a port from 1 to 65535.
 */
function isMinecraftAddress(value: string): boolean {
  const match = /^([^:]+)(?::(\d{1,5}))?$/.exec(value);
  if (!match) return false;
  const host = match[1]!;
  const port = match[2];
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65_535)) return false;
  if (host.length > 253) return false;
  const labels = host.split('.');
  return labels.length >= 2 && labels.every((label) => HOST_LABEL.test(label));
}

/**
 * Whether the platform "knows" an ID. The emulator has no platform to ask, so the form decides:
 * Discord Snowflakes (17 to 20 digits), Roblox IDs (1 to 20 digits), Minecraft host[:port].
 */
function foundOnPlatform(platform: Platform, platformId: string): boolean {
  switch (platform) {
    case 'discord':
      return SNOWFLAKE_PATTERN.test(platformId);
    case 'roblox':
      return ROBLOX_ID_PATTERN.test(platformId);
    case 'minecraft':
      return isMinecraftAddress(platformId);
  }
}

/** Minecraft host names are case-insensitive; other platform IDs are compared as given. */
function samePlatformId(platform: Platform, a: string, b: string): boolean {
  return platform === 'minecraft' ? a.toLowerCase() === b.toLowerCase() : a === b;
}

/** An optional text field checked by the same rule as the listing edit; 422 naming the field. */
function optionalText(body: Record<string, unknown>, name: string, problem: (value: unknown) => string | null): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  const found = problem(value);
  if (found !== null) fail(422, `${name}: ${found}`);
  return value as string;
}

/** `POST /users/@me/projects`: validation (422), already listed (409), not on the platform (422), then a `draft`. */
function createProject(ctx: RequestContext): Reply {
  const { user } = authorizeUser(ctx, 'user.projects.write');
  const body = readJsonObject(ctx);
  const { platform, type, platform_id: platformId } = body;
  if (typeof platform !== 'string' || !Object.hasOwn(PLATFORM_TYPES, platform)) {
    fail(422, 'platform must be one of discord, roblox, minecraft');
  }
  const types: readonly string[] = PLATFORM_TYPES[platform as Platform];
  if (typeof type !== 'string' || !types.includes(type)) {
    fail(422, `type must be ${types.join(' or ')} for the ${platform} platform`);
  }
  if (typeof platformId !== 'string' || platformId === '') fail(422, 'platform_id is required (a string)');
  const headline = optionalText(body, 'headline', headlineProblem);
  const pageContent = optionalText(body, 'page_content', pageContentProblem);
  const known = platform as Platform;
  for (const existing of ctx.emu.state.projects.values()) {
    if (existing.platform === known && samePlatformId(known, existing.platform_id, platformId)) {
      fail(409, `a ${known} project with platform_id ${platformId} is already listed`);
    }
  }
  if (!foundOnPlatform(known, platformId)) fail(422, `the ${known} ${type} ${platformId} was not found on the platform`);
  const { project } = addProject(ctx.emu, {
    platform: known,
    type: type as ProjectType,
    platform_id: platformId,
    owner_user_id: user.id,
    review_status: 'draft',
    // Missing texts default to the platform's description (addProject fetches it).
    ...(headline !== undefined ? { headline: { en: headline } } : {}),
    ...(pageContent !== undefined ? { page_content: { en: pageContent } } : {}),
  });
  return json(201, userProjectJson(project));
}

/** v1 user endpoints: `@me`, the user's projects, project creation as `draft`. */
export const v1UserRoutes: Route[] = [
  { method: 'GET', pattern: '/users/@me', handler: (ctx) => json(200, userJson(authorizeUser(ctx, 'user.identify').user)) },
  {
    method: 'GET',
    pattern: '/users/@me/projects',
    handler: (ctx) => {
      const { user } = authorizeUser(ctx, 'user.projects.read');
      const projects = [...ctx.emu.state.projects.values()].filter((project) => canManageProject(project, user.id));
      return json(200, projects.map(userProjectJson));
    },
  },
  { method: 'POST', pattern: '/users/@me/projects', handler: createProject },
];
