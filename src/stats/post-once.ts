import type { ListingClient } from '../api/client.js';
import { botIdFromToken } from '../api/credentials.js';
import { v0StatsBody } from '../api/v0/index.js';
import type { ListingAgentConfig } from '../config/schema.js';
import type { Platform, ProjectType } from '../contract/limits.js';
import { metricsKind } from '../contract/metrics.js';
import type { PostTarget } from './events.js';
import { ProjectKindError } from './post-failure.js';
import { type Sample, samplePayload, sampleProblems, sampleV0Stats, toBatchEntries } from './samples.js';
import type { CountSource } from './source.js';

/**
 * The core of `listing-agent stats post`: read the counts once and post them (or say what would be
 * posted) the way the poster's next post would: one batch entry or one PATCH per `stats.mode`,
 * and v0 when `stats.v0`. No schedule, no buffer, no retry beyond the client's own.
 */

/** One request a one-shot post sends (or would send). */
export interface PlannedPost {
  target: PostTarget;
  method: 'POST' | 'PATCH';
  /** The URL, with `@me` or the bot ID from the token. */
  url: string;
  /** The JSON body as sent. */
  body: unknown;
}

/** What one target's post came to. */
export interface PostOutcome extends PlannedPost {
  /** Undefined on success (or in a dry run). */
  error?: Error;
}

/** What {@link postStatsOnce} did. */
export type PostOnceResult =
  | { ready: false; reason: string; source: string }
  | { ready: true; source: string; sample: Sample; dryRun: boolean; posts: PostOutcome[] };

/** Options of {@link postStatsOnce}. */
export interface PostOnceOptions {
  config: ListingAgentConfig;
  source: CountSource;
  /** Needed unless `dryRun`. */
  client?: Pick<ListingClient, 'metrics' | 'v0' | 'projects'>;
  /** Only say what would be sent. Default false. */
  dryRun?: boolean;
  /** Epoch ms. Default `Date.now`. */
  now?: () => number;
  signal?: AbortSignal;
}

/** The requests for `sample` under `config` (v1 per mode, then v0 when enabled). */
function planPosts(config: ListingAgentConfig, sample: Sample, now: number): PlannedPost[] {
  const v1 = config.service.v1.replace(/\/+$/, '');
  const posts: PlannedPost[] = [];
  if (config.stats.mode === 'batch') {
    posts.push({
      target: 'v1_batch',
      method: 'POST',
      url: `${v1}/projects/@me/metrics/batch`,
      body: { data: toBatchEntries([sample], { now }) },
    });
  } else {
    posts.push({ target: 'v1', method: 'PATCH', url: `${v1}/projects/@me/metrics`, body: samplePayload(sample) });
  }
  if (config.stats.v0) {
    let botId: string;
    try {
      botId = botIdFromToken(config.service.token);
    } catch {
      botId = ':bot_id';
    }
    posts.push({
      target: 'v0',
      method: 'POST',
      url: `${config.service.v0.replace(/\/+$/, '')}/bots/${botId}/stats`,
      body: v0StatsBody(sampleV0Stats(sample)),
    });
  }
  return posts;
}

/** Reads the counts once and posts them; see {@link PostOnceOptions}. Post failures are returned, not thrown. */
export async function postStatsOnce(options: PostOnceOptions): Promise<PostOnceResult> {
  const { config, source } = options;
  const now = options.now ?? Date.now;
  const reading = await source.read(options.signal);
  if (!reading.ready) return { ready: false, reason: reading.reason, source: source.description };
  const sample: Sample = { timestamp: now(), serverCount: reading.serverCount, shardCount: reading.shardCount };
  if (reading.shards) sample.shards = [...reading.shards];
  const problems = sampleProblems(sample);
  if (problems.length > 0) {
    const detail = problems.map((p) => `${p.path || 'counts'}: ${p.message}`).join('; ');
    return { ready: false, reason: `the source gave counts the service cannot take (${detail})`, source: source.description };
  }
  const planned = planPosts(config, sample, sample.timestamp);
  if (options.dryRun) return { ready: true, source: source.description, sample, dryRun: true, posts: planned };

  const client = options.client;
  if (!client) throw new TypeError('postStatsOnce needs a client unless dryRun');
  const signal = options.signal;
  const posts: PostOutcome[] = [];
  for (const post of planned) {
    try {
      if (post.target === 'v0') {
        await client.v0.postStats(sampleV0Stats(sample), undefined, signal ? { signal } : {});
      } else {
        // The project's kind lets the client check the payload by the platform's rule before sending.
        const project = await client.projects.get(undefined, signal ? { signal } : {});
        const kind = metricsKind(project.platform as Platform, project.type as ProjectType);
        if (kind !== 'discord/bot') throw new ProjectKindError(project.platform, project.type);
        const callOptions = { kind, ...(signal ? { signal } : {}) };
        if (post.target === 'v1_batch') await client.metrics.batch(toBatchEntries([sample], { now: now(), kind }), undefined, callOptions);
        else await client.metrics.update(samplePayload(sample, kind), undefined, callOptions);
      }
      posts.push(post);
    } catch (error) {
      posts.push({ ...post, error: error instanceof Error ? error : new Error(String(error)) });
    }
  }
  return { ready: true, source: source.description, sample, dryRun: false, posts };
}
