import { describe, expect, it } from 'vitest';
import { HEADLINES } from '../../../src/log/agent-logger.js';
import { createConsoleLogger } from '../../../src/runtime/console-logger.js';
import { manualTime } from '../votes/pipeline-harness.js';

/**
 * The embedded agent's default logger (issue 32, item 4): warnings and errors as plain lines, the
 * two headlines among the info lines, repeats summarised, no secret.
 */

function consoleLog(secrets: string[] = []) {
  const time = manualTime();
  const lines: string[] = [];
  const logger = createConsoleLogger({ now: time.now, write: (line) => lines.push(line), secrets, schedule: time.schedule });
  return { time, lines, logger };
}

describe('createConsoleLogger', () => {
  it('writes warn and error lines, of info only the headlines, never debug: one line each, the error, the fields and the fix', () => {
    const { lines, logger } = consoleLog();
    logger.error({ status: 401, err: 'GET /projects/@me failed with 401:\n  unauthorized', fix: 'copy the project token into service.token' }, 'the service refused the project token (401)');
    logger.info({ url: 'http://127.0.0.1:9464' }, 'health server listening');
    logger.info({ project: 'Bot', projectId: '1' }, HEADLINES.ready);
    logger.child({ capability: 'stats' }).info({ target: 'v1_batch', serverCount: 3, shardCount: 1 }, HEADLINES.firstPost);
    logger.debug('a detail');
    logger.warn('a plain warning');
    expect(lines).toEqual([
      'listing-agent: the service refused the project token (401): GET /projects/@me failed with 401: unauthorized (status: 401); fix: copy the project token into service.token',
      'listing-agent: agent ready (project: Bot, projectId: 1)',
      'listing-agent: first stats post accepted (target: v1_batch, serverCount: 3, shardCount: 1)',
      'listing-agent: a plain warning',
    ]);
  });

  it('writes a repeated message once a minute, and tells the repeats in one line at the end of the minute or at flush()', async () => {
    const { time, lines, logger } = consoleLog();
    for (let attempt = 2; attempt <= 13; attempt += 1) logger.warn({ attempt }, 'the service still refuses the project token');
    logger.warn('another warning');
    expect(lines).toEqual(['listing-agent: the service still refuses the project token (attempt: 2)', 'listing-agent: another warning']);
    await time.advance(60_000);
    expect(lines.slice(2)).toEqual(['listing-agent: the service still refuses the project token (repeated 11 times in the last 60 s)']);

    // A new minute: its first line is written again; a stop tells what the minute so far held back.
    logger.warn({ attempt: 14 }, 'the service still refuses the project token');
    logger.warn({ attempt: 15 }, 'the service still refuses the project token');
    await time.advance(5_000);
    logger.flush();
    expect(lines.slice(3)).toEqual([
      'listing-agent: the service still refuses the project token (attempt: 14)',
      'listing-agent: the service still refuses the project token (repeated once in the last 5 s)',
    ]);
  });

  it('leaves out the fields named like secrets and scrubs every secret value, wherever it is', () => {
    const { lines, logger } = consoleLog(['s3cr3t-project-token']);
    logger.error({ token: 'another-token-value', err: 'Authorization s3cr3t-project-token was refused', hook: 'reward' }, 'a hook failed with s3cr3t-project-token');
    logger.warn({ hook: { name: 'reward', secret: 'a-hook-secret-value' } }, 'a nested one');
    expect(lines).toEqual([
      'listing-agent: a hook failed with [redacted]: Authorization [redacted] was refused (hook: reward)',
      'listing-agent: a nested one (hook: {"name":"reward"})',
    ]);
  });
});
