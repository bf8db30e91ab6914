import { DISPOSE_DEADLINE_MS, type StatsPoster, type StatsPosterOptions } from './poster-options.js';
import { flush, sampleOnce, startPoster, stopPoster } from './poster-runs.js';
import { createPosterState, track } from './poster-state.js';

export {
  
  
  
  
  type StatsPoster,
  type StatsPosterOptions,
} from './poster-options.js';

/**
 * Creates a stats poster. See {@link StatsPosterOptions} for the defaults.
 *
 * A thin shell: the state is one plain object (`poster-state.ts`), the decisions are pure
 * functions (`poster-policy.ts`), the posts (`poster-posts.ts`) and the runs around them
 * (`poster-runs.ts`) are module functions over that state.
 */
export function createStatsPoster(options: StatsPosterOptions): StatsPoster {
  const state = createPosterState(options);
  const poster: StatsPoster = {
    start: () => startPoster(state),
    stop: (deadline) => stopPoster(state, deadline),
    sample: () => track(state, sampleOnce(state)),
    post: () => flush(state, 'tick'),
    pendingSamples: () => state.buffer.samples.length,
    async idle() {
      while (state.inFlight.size > 0) await Promise.allSettled([...state.inFlight]);
    },
    [Symbol.asyncDispose]: () => poster.stop(state.now() + DISPOSE_DEADLINE_MS),
  };
  return poster;
}
