import type { AgentLogger } from '../log/agent-logger.js';
import type { StateStore } from '../store/types.js';
import { emptyBuffer, parseBuffer, type SampleBuffer } from './samples.js';
import { errorMessage } from '../errors.js';

/** The state store key of the unsent samples, the newest sample seen and the last accepted post. */
export const BUFFER_KEY = 'stats:buffer';

/** The stored form's version, so a later format can read (or set aside) this one. */
const BUFFER_VERSION = 1;

/** Persists the sample buffer in the state store; writes are queued so the newest buffer lands last. */
export interface BufferStore {
  /** Reads the buffer saved by an earlier run (empty when none). */
  load(): Promise<SampleBuffer>;
  /** Saves `buffer`; never throws (a failed write is reported and the next one tries again). */
  save(buffer: SampleBuffer, options?: { durable?: boolean }): Promise<void>;
}

/** Creates the buffer's persistence over `store`. */
export function createBufferStore(store: StateStore, logger: AgentLogger, reportError: (error: unknown) => void): BufferStore {
  let queue: Promise<void> = Promise.resolve();
  return {
    async load() {
      let raw: unknown;
      try {
        raw = await store.get(BUFFER_KEY);
      } catch (error) {
        logger.warn({ err: errorMessage(error), key: BUFFER_KEY }, 'could not read the saved stats samples; starting with none');
        reportError(error);
        return emptyBuffer();
      }
      const { buffer, dropped } = parseBuffer(raw);
      if (dropped > 0) logger.warn({ dropped, key: BUFFER_KEY }, 'left out saved stats samples that were not readable');
      if (buffer.samples.length > 0)
        logger.info({ pendingSamples: buffer.samples.length }, 'loaded unsent stats samples from the state store');
      return buffer;
    },
    save(buffer, options = {}) {
      // `posted` (the last accepted post and its time) is what a restart compares with, to skip an unchanged first post.
      const value = {
        version: BUFFER_VERSION,
        samples: buffer.samples,
        ...(buffer.last ? { last: buffer.last } : {}),
        ...(buffer.posted ? { posted: buffer.posted } : {}),
      };
      // Chained, so that two saves in a row can never land in the wrong order.
      queue = queue.then(() =>
        store.set(BUFFER_KEY, value, options).catch((error: unknown) => {
          logger.warn({ err: errorMessage(error), key: BUFFER_KEY }, 'could not save the stats samples; the next change tries again');
          reportError(error);
        }),
      );
      return queue;
    },
  };
}
