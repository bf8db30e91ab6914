import type { ListingAgentConfig } from '../config/schema.js';
import type { CountSource } from './source.js';
import { sourceSpec, type ConfiguredSourceOptions, type SourceSpec } from './source-spec.js';
import { createDiscordRestSource } from './sources/discord-rest.js';
import { createPushSource } from './sources/push.js';
import { createRedisShardsSource } from './sources/redis-shards.js';

export { SourceConfigError, type ConfiguredSourceOptions } from './source-spec.js';

/**
 * The count source `stats.source` names, for the daemon and `stats post`: `discord-rest` (Discord's
 * API with `discord.token`) or `push` (the agent's endpoint the bot reports to). Throws
 * {@link SourceConfigError} for `embedded`, whose counts come from the discord.js object passed to
 * `createListingAgent`, and for a missing secret (the config check refuses both when
 * `stats.enabled`; this says it again for a caller that did not enable stats).
 */
export function createConfiguredSource(config: ListingAgentConfig, options: ConfiguredSourceOptions = {}): CountSource {
  return sourceFromSpec(sourceSpec(config, options));
}

/** Makes the source of `spec` (this module loads all three sources; see `loadSourceFromSpec` for one). */
function sourceFromSpec(spec: SourceSpec): CountSource {
  switch (spec.kind) {
    case 'discord-rest':
      return createDiscordRestSource(spec.options);
    case 'push':
      return createPushSource(spec.options);
    case 'redis':
      return createRedisShardsSource(spec.options);
  }
}
