import { validateCommands } from '../../contract/commands.js';
import { type FieldProblem, describeProblems } from '../../contract/field-problems.js';
import type { Scope } from '../../contract/limits.js';
import {
  batchApplicationOrder,
  metricsBatchEntryProblems,
  parseMetricsBatch,
} from '../../contract/metrics-batch.js';
import { type MetricsKind, type MetricsPayload, metricsKind, validateMetrics } from '../../contract/metrics.js';
import { validateAnnouncement, validateProjectEdit } from '../../contract/project-edit.js';
import { type ProjectAccess, authorizeProject, limitProjectWrites } from '../auth.js';
import type { EmulatorContext } from '../context.js';
import { iso } from '../clock.js';
import { type RequestContext, empty, fail, json, readJson } from '../http.js';
import { projectDetail } from '../model.js';
import type { Route } from '../router.js';
import type { AppliedMetrics, ProjectRecord } from '../state.js';

/**
 * The v1 project routes under `/projects/:project_id` (`@me` with a project token): detail, listing
 * edit, commands, announcements, metrics and metrics batch. Validation rules live in
 * `src/contract/` so clients check requests with the same code.
 */

function access(ctx: RequestContext, scope: Scope): ProjectAccess {
  return authorizeProject(ctx, ctx.params.project_id!, scope);
}

function reject(problems: FieldProblem[]): never {
  return fail(422, describeProblems(problems));
}

/** The project's metrics kind; a project whose platform and type post no metrics cannot be sent any. */
function requireMetricsKind(project: ProjectRecord): MetricsKind {
  const kind = metricsKind(project.platform, project.type);
  if (!kind) fail(422, `a ${project.platform} ${project.type} project takes no metrics`);
  return kind;
}

/**
 * Records one accepted payload and updates the current values. `null` clears a value and an
 * absent field leaves it as it is. A bot's counts live in `stats`, shared with v0, whose `shards`
 * v1 never touches.
 */
function applyMetrics(
  emu: EmulatorContext,
  project: ProjectRecord,
  metrics: MetricsPayload,
  source: AppliedMetrics['source'],
  timestamp: string | null,
): void {
  project.metrics.push({ source, applied_at: iso(emu.clock.now()), timestamp, metrics: { ...metrics } });
  for (const [field, value] of Object.entries(metrics)) {
    if (value === undefined) continue;
    if (field === 'server_count' || field === 'shard_count') project.stats[field] = value;
    else project.current_metrics[field] = value;
  }
}

function getProject(ctx: RequestContext) {
  const { project } = access(ctx, 'project.information.read');
  return json(200, projectDetail(ctx.emu, project));
}

function patchProject(ctx: RequestContext) {
  const { project } = access(ctx, 'project.information.write');
  const edit = validateProjectEdit(readJson(ctx));
  if (!edit.ok) reject(edit.problems);
  // Locales merge: a PATCH of `de` keeps `en`.
  Object.assign(project.headline, edit.value.headline);
  Object.assign(project.page_content, edit.value.page_content);
  return empty();
}

function putCommands(ctx: RequestContext) {
  const { project } = access(ctx, 'project.information.write');
  limitProjectWrites(ctx, project);
  if (project.platform !== 'discord' || project.type !== 'bot') {
    fail(422, `commands exist only for chat-platform bots; this is a ${project.platform} ${project.type} project`);
  }
  const commands = validateCommands(readJson(ctx));
  if (!commands.ok) reject(commands.problems);
  project.commands = structuredClone(commands.value);
  return empty();
}

function postAnnouncement(ctx: RequestContext) {
  const { project, actingUserId } = access(ctx, 'project.announcements.write');
  const input = validateAnnouncement(readJson(ctx));
  if (!input.ok) reject(input.problems);
  const now = ctx.emu.clock.now();
  const last = project.announcements.at(-1);
  if (last) {
    const readyAt = Date.parse(last.created_at) + ctx.emu.settings.announcementCooldownSeconds * 1000;
    if (now < readyAt) {
      // Rounded up: a client that waits exactly Retry-After seconds must not be refused again.
      const seconds = Math.ceil((readyAt - now) / 1000);
      const cooldown = ctx.emu.settings.announcementCooldownSeconds;
      fail(429, `one announcement per ${cooldown} seconds; the next one is possible in ${seconds} seconds`, {
        headers: { 'retry-after': String(seconds) },
      });
    }
  }
  const created = { title: input.value.title, content: input.value.content, created_at: iso(now) };
  project.announcements.push({ ...created, category: input.value.category, author_user_id: actingUserId });
  return json(201, created);
}

function patchMetrics(ctx: RequestContext) {
  const { project } = access(ctx, 'project.metrics.write');
  limitProjectWrites(ctx, project);
  const kind = requireMetricsKind(project);
  const metrics = validateMetrics(readJson(ctx), kind);
  if (!metrics.ok) reject(metrics.problems);
  applyMetrics(ctx.emu, project, metrics.value, 'v1', null);
  return empty();
}

function postMetricsBatch(ctx: RequestContext) {
  const { project } = access(ctx, 'project.metrics.write');
  limitProjectWrites(ctx, project);
  const kind = requireMetricsKind(project);
  const parsed = parseMetricsBatch(readJson(ctx));
  if (!parsed.ok) reject(parsed.problems);
  // "Processing stops" at the first bad entry in application order; what came before stays applied.
  const now = ctx.emu.clock.now();
  for (const entry of batchApplicationOrder(parsed.value)) {
    const problems = metricsBatchEntryProblems(entry, kind, now);
    if (problems.length > 0) reject(problems);
    // No problems means validateMetrics accepted the payload.
    applyMetrics(ctx.emu, project, entry.metrics as MetricsPayload, 'v1-batch', entry.timestamp);
  }
  return empty();
}

/** v1 project routes: detail, patch, commands, announcements, metrics (PATCH and batch). */
export const v1ProjectRoutes: Route[] = [
  { method: 'GET', pattern: '/projects/:project_id', handler: getProject },
  { method: 'PATCH', pattern: '/projects/:project_id', handler: patchProject },
  { method: 'PUT', pattern: '/projects/:project_id/commands', handler: putCommands },
  { method: 'POST', pattern: '/projects/:project_id/announcements', handler: postAnnouncement },
  { method: 'PATCH', pattern: '/projects/:project_id/metrics', handler: patchMetrics },
  { method: 'POST', pattern: '/projects/:project_id/metrics/batch', handler: postMetricsBatch },
];
