import type { ListingAgentConfig } from '../config/schema.js';
import { printable } from '../contract/printable.js';
import { EXIT, type CliIo } from './io.js';

/**
 * The CLI's `--agent` road: asks the running agent, through its health server's status actions
 * (`POST /status/actions/<name>`, with `health.adminToken`), instead of doing the work itself. So
 * `votes retry --agent` works beside a running daemon (no state lock to take), and `stats post
 * --agent` posts the counts the agent has (any source, push and embedded included).
 */

/** How long the agent may take to answer (a post waits for the service). */
const ANSWER_WITHIN_MS = 60_000;

/** The running agent's base URL from `health.listen`; a wildcard host is reached on loopback. */
function agentBaseUrl(config: ListingAgentConfig): string {
  const { host, port } = config.health.listen;
  const reachable = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

/** What the agent answered: its JSON body, or the exit code after the line that says why not. */
export type AgentAnswer = { ok: true; body: Record<string, unknown> } | { ok: false; exit: number };

/**
 * POSTs action `name` with `body` to the running agent. Prints nothing on success; on a refusal
 * or no answer, one line on stderr (prefixed `listing-agent <command>:`) that says what to fix.
 */
export async function askRunningAgent(
  config: ListingAgentConfig,
  name: 'retry' | 'post-stats',
  body: Record<string, unknown>,
  io: CliIo,
  command: string,
): Promise<AgentAnswer> {
  const fail = (exit: number, text: string): AgentAnswer => {
    io.stderr(`listing-agent ${command}: ${printable(text)}\n`);
    return { ok: false, exit };
  };
  if (!config.health.enabled)
    return fail(EXIT.config, 'health.enabled is off in this configuration: --agent talks to the running agent through its health server');
  const token = config.health.adminToken;
  if (token === undefined) {
    return fail(
      EXIT.config,
      "--agent needs health.adminToken (LISTING_AGENT_HEALTH_ADMIN_TOKEN), the same as the running agent's: set it in both and restart " +
        "the agent",
    );
  }
  const base = agentBaseUrl(config);
  let response: Response;
  try {
    response = await fetch(`${base}/status/actions/${name}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
    });
  } catch (error) {
    const reason = error instanceof Error ? ((error.cause as Error | undefined)?.message ?? error.message) : String(error);
    return fail(EXIT.failure, `no agent answers at ${base} (health.listen): ${reason}. Is it running ('listing-agent run')?`);
  }
  const answer = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  const said = typeof answer.error === 'string' ? answer.error : response.statusText;
  if (response.status === 401)
    return fail(EXIT.failure, `the agent at ${base} refused the admin token: health.adminToken here differs from the running agent's`);
  if (response.status === 404) return fail(EXIT.failure, `the agent at ${base} serves no status actions: is health.statusPage off there?`);
  if (!response.ok) return fail(EXIT.failure, `the agent at ${base} answered ${response.status}: ${said}`);
  return { ok: true, body: answer };
}
