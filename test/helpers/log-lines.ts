import { Writable } from 'node:stream';
import { createLogger, type LoggerOptions } from '../../src/log/logger.js';

/**
 * The daemon's logger (pino, JSON lines) writing into memory: the parsed lines and the raw text
 * (to look for a secret in). Without `secrets` nothing is redacted, so a leak shows.
 */
export function capturedLog(options: Omit<LoggerOptions, 'format' | 'destination'> = { level: 'info' }) {
  const lines: Record<string, unknown>[] = [];
  let text = '';
  const destination = new Writable({
    write(chunk, _encoding, done) {
      text += chunk.toString();
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger({ ...options, format: 'json', destination }), lines, text: () => text };
}
