/**
 * The root of listing-agent's one error family. Every error the library throws on purpose is a
 * `ListingAgentError` with a stable `code` that programs can switch on; messages say what to fix.
 */
export class ListingAgentError extends Error {
  /** A stable, machine-readable code (`api_unauthorized`, `network`, `validation`, ...). */
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** One problem with a value, located by its field path (`data[3].metrics.server_count`). */
export interface FieldIssue {
  path: string;
  message: string;
}

/**
 * A value failed validation: a request checked before sending, a response that does not match the
 * contract, or a configuration. `issues` lists every problem with its path.
 */
export class ValidationError extends ListingAgentError {
  readonly issues: FieldIssue[];
  /** What was checked: `request`, `response` or `config`. */
  readonly subject: 'request' | 'response' | 'config';

  constructor(subject: 'request' | 'response' | 'config', what: string, issues: FieldIssue[]) {
    const lines = issues.slice(0, 10).map((issue) => `${issue.path || '(root)'}: ${issue.message}`);
    if (issues.length > 10) lines.push(`... and ${issues.length - 10} more`);
    super('validation', `${what} is invalid: ${lines.join('; ')}`);
    this.issues = issues;
    this.subject = subject;
  }
}

/** The message of whatever was thrown: an `Error`'s message, anything else as text. For logs and one-line reports. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * {@link errorMessage} of the innermost useful cause, with its errno code: undici wraps the socket
 * error (`fetch failed`, `other side closed`) around the one that says what happened.
 */
export function causeMessage(error: unknown): string {
  let current: unknown = error;
  while (current instanceof Error && current.cause instanceof Error && !(current as NodeJS.ErrnoException).code) current = current.cause;
  const code = (current as NodeJS.ErrnoException | undefined)?.code;
  const message = errorMessage(current);
  return code && !message.includes(code) ? `${code} ${message}` : message;
}
