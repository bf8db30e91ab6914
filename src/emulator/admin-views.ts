import { iso } from './clock.js';
import type { ProjectRecord, UserRecord, EmulatorVoteRecord } from './state.js';

/** What the admin API returns: copies of the stored records, with times as ISO 8601. */

/** A user as the admin API returns it. */
export interface AdminUser {
  id: string;
  username: string;
  platform_id: string;
  avatar: string | null;
}

/** A project as the admin API returns it (every stored field, unlike the service's views). */
export interface AdminProject {
  id: string;
  platform: ProjectRecord['platform'];
  type: ProjectRecord['type'];
  platform_id: string;
  name: string;
  owner_user_id: string | null;
  admin_user_ids: string[];
  headline: Record<string, string>;
  page_content: Record<string, string>;
  tags: string[];
  review_status: string;
  stats: ProjectRecord['stats'];
  current_metrics: Record<string, number | null>;
  created_at: string;
}

/** A vote as the admin API returns it. */
export interface AdminVote {
  id: string;
  project_id: string;
  user_id: string;
  platform_id: string;
  weight: number;
  created_at: string;
  expires_at: string;
}

/** Tokens from {@link EmulatorAdmin.grantAuthorization}. */
export interface AdminGrant {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  scope: string;
}

/** A user's admin view. */
export function adminUser(user: UserRecord): AdminUser {
  return { id: user.id, username: user.username, platform_id: user.platform_id, avatar: user.avatar };
}

/** A project's admin view: every stored field, copied. */
export function adminProject(project: ProjectRecord): AdminProject {
  return {
    id: project.id,
    platform: project.platform,
    type: project.type,
    platform_id: project.platform_id,
    name: project.name,
    owner_user_id: project.owner_user_id,
    admin_user_ids: [...project.admin_user_ids],
    headline: { ...project.headline },
    page_content: { ...project.page_content },
    tags: [...project.tags],
    review_status: project.review_status,
    stats: { ...project.stats, shards: [...project.stats.shards] },
    current_metrics: { ...project.current_metrics },
    created_at: iso(project.created_at),
  };
}

/** A vote's admin view. */
export function adminVote(vote: EmulatorVoteRecord): AdminVote {
  return {
    id: vote.id,
    project_id: vote.project_id,
    user_id: vote.user_id,
    platform_id: vote.platform_id,
    weight: vote.weight,
    created_at: iso(vote.created_at),
    expires_at: iso(vote.expires_at),
  };
}
