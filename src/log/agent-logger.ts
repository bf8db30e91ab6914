/**
 * The logger the agent writes to: pino's method shape (`logger.info(obj, msg)` or
 * `logger.info(msg)`), so a pino logger, a pino child, or anything shaped like one fits.
 */
export interface AgentLogger {
  error(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  debug(obj: object | string, msg?: string): void;
  child(bindings: Record<string, unknown>): AgentLogger;
}

/** A logger that drops everything (the embedded default). */
export const silentLogger: AgentLogger = {
  error() {},
  warn() {},
  info() {},
  debug() {},
  child: () => silentLogger,
};

/**
 * The two `info` lines that tell a person the agent works: it is ready, and its first stats post
 * was accepted. Every logger gets them at `info`; the embedded agent's quiet default logger
 * (runtime/console-logger.ts) writes these and no other `info` line.
 */
export const HEADLINES = { ready: 'agent ready', firstPost: 'first stats post accepted' } as const;
