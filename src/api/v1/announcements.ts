import { requireValid } from '../context.js';
import { CONTRACT_LIMITS, type AnnouncementCategory } from '../../contract/limits.js';
import { validateAnnouncement } from '../../contract/project-edit.js';
import type { ApiContext, CallOptions } from '../context.js';
import { projectSegment } from '../credentials.js';
import { RateLimitError } from '../errors.js';
import { redactUrl } from '../redact.js';
import { type Announcement, announcementSchema } from '../schemas/projects.js';

/** The body of {@link AnnouncementsApi.create}. */
export interface AnnouncementCreate {
  /** 3 to 100 characters. */
  title: string;
  /** 10 to 2,000 characters. */
  content: string;
  /** `announcement` (the service's default when absent), `event` or `new_feature`. */
  category?: AnnouncementCategory;
}

function minutesText(ms: number): string {
  const minutes = Math.ceil(ms / 60_000);
  return minutes >= 60 ? `${Math.floor(minutes / 60)} h ${minutes % 60} min` : `${minutes} min`;
}

/** The v1 announcements operation. */
export function createAnnouncementsApi(ctx: ApiContext) {
  return {
    /**
     * `POST /projects/:project_id/announcements` (scope `project.announcements.write`): publishes
     * an announcement. Checked before sending (title 3 to 100 characters, content 10 to 2,000,
     * category one of `announcement`, `event`, `new_feature`). Not idempotent: never sent again
     * once it may have reached the service (a 502 or a reset fails the call instead).
     *
     * The service allows one announcement per 4 hours per project. The client learns the cooldown
     * from its last success (4 h from then) and from a 429 (its `Retry-After`), and while it runs
     * refuses locally, without a request, with a `RateLimitError` whose `attempts` is 0 and whose
     * `retryAfterMs` says how long is left. A cooldown begun elsewhere (the dashboard, another
     * client) is learnt from the service's first 429.
     * @param projectId Default: `@me` with a project token, the client's `projectId` with OAuth.
     */
    async create(announcement: AnnouncementCreate, projectId?: string, options?: CallOptions): Promise<Announcement> {
      const operation = 'announcements.create';
      const segment = projectSegment(ctx.credential, operation, projectId);
      const valid = requireValid(operation, validateAnnouncement(announcement));
      const path = `/projects/${segment}/announcements`;
      // The segment is the key: one client has one credential, so `@me` always names one project.
      const remaining = ctx.announcementCooldown.remaining(segment, ctx.clock.now());
      if (remaining > 0) {
        throw new RateLimitError({
          status: 429,
          method: 'POST',
          url: redactUrl(`${ctx.v1BaseUrl.replace(/\/+$/, '')}${path}`, ctx.secrets()),
          family: 'v1',
          attempts: 0,
          retryAfterMs: remaining,
          error: `refused locally, nothing was sent: the announcement cooldown has ${minutesText(remaining)} left`,
        });
      }
      // The category is sent only when given, so the service's default applies otherwise.
      const body = {
        title: valid.title,
        content: valid.content,
        ...(announcement.category !== undefined ? { category: valid.category } : {}),
      };
      try {
        const created = await ctx.v1({
          operation,
          method: 'POST',
          path,
          json: body,
          idempotent: false,
          response: announcementSchema,
          options,
        });
        ctx.announcementCooldown.block(segment, ctx.clock.now() + CONTRACT_LIMITS.announcementCooldownSeconds * 1000);
        return created;
      } catch (error) {
        // A 429 without Retry-After may be the general rate limit, not the cooldown: nothing to learn.
        if (error instanceof RateLimitError && error.retryAfterMs !== undefined) {
          ctx.announcementCooldown.block(segment, ctx.clock.now() + error.retryAfterMs);
        }
        throw error;
      }
    },
  };
}

/** The v1 announcements operation of a {@link ListingClient}. */
export type AnnouncementsApi = ReturnType<typeof createAnnouncementsApi>;
