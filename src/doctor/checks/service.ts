import { projectSchema } from '../../api/schemas/projects.js';
import { decodeProjectToken } from '../../contract/project-token.js';
import type { ServiceAnswer } from '../service-probe.js';
import { classifySkew, describeSkew, measureSkew } from '../skew.js';
import { DOCTOR_DEFAULTS, fail, ok, skip, warn, type CheckOutcome, type DoctorCheck, type DoctorDeps } from '../types.js';

const TOKEN_FIX =
  "copy the project token again from the project's Integrations & API settings into service.token (LISTING_AGENT_SERVICE_TOKEN)";

/** The problem+json `detail` (or `title`) of an answer, for the summary. */
function problemDetail(body: unknown): string {
  if (typeof body !== 'object' || body === null) return '';
  const { detail, title } = body as { detail?: unknown; title?: unknown };
  const text = typeof detail === 'string' && detail !== '' ? detail : typeof title === 'string' ? title : '';
  return text === '' ? '' : `: ${text.slice(0, 200)}`;
}

/** Why the service could not be asked, as a `fail`. */
function unreachable(answer: Extract<ServiceAnswer, { kind: 'unreachable' }>): CheckOutcome {
  return fail(
    `cannot reach the service at ${answer.url}: ${answer.reason}`,
    answer.timedOut
      ? 'the service did not answer in time: check that this machine reaches service.v1 (proxy, firewall), or try again later'
      : 'check service.v1 (LISTING_AGENT_SERVICE_V1) and that this machine reaches it (DNS, firewall, proxy)',
  );
}

/** What an answer of `GET /projects/@me` says about the token. */
export function tokenOutcome(answer: ServiceAnswer): CheckOutcome {
  if (answer.kind === 'unreachable') return unreachable(answer);
  const { status, body } = answer;
  if (status === 200) {
    const project = projectSchema.safeParse(body);
    if (!project.success)
      return warn(
        'the service accepted the token, but its answer is not a project',
        "check that service.v1 is the service's v1 base URL (https://top.gg/api/v1)",
      );
    const p = project.data;
    return ok(`accepted: project ${p.name} (ID ${p.id}, ${p.platform} ${p.type})`, {
      projectId: p.id,
      name: p.name,
      platform: p.platform,
      type: p.type,
    });
  }
  if (status === 401)
    return fail(
      `the service refused the token (401${problemDetail(body)}): it was regenerated or revoked, or is not this service's`,
      TOKEN_FIX,
    );
  if (status === 400) return fail(`the service calls the token malformed (400${problemDetail(body)})`, TOKEN_FIX);
  if (status === 404) {
    return fail(
      `the token's project no longer exists at the service (404${problemDetail(body)})`,
      "check the project in the dashboard; if it was deleted and listed again, use the new project's token",
    );
  }
  if (status === 429)
    return warn(
      'the service is rate limiting this token (429): it was not checked',
      'try again in a minute; if it stays, something else uses the same token heavily',
    );
  if (status >= 500)
    return fail(
      `the service failed to answer (${status}${problemDetail(body)})`,
      'the service may be down or in maintenance: try again later',
    );
  return fail(
    `unexpected answer ${status} from ${answer.url}`,
    "check that service.v1 (LISTING_AGENT_SERVICE_V1) is the service's v1 base URL",
  );
}

/** `service.token`: well-formed, and accepted by `GET /projects/@me` (project name and ID shown). */
export const tokenCheck: DoctorCheck = {
  name: 'service.token',
  paths: ['service.token'],
  async run(deps) {
    const decoded = decodeProjectToken(deps.config.service.token);
    if (!decoded.ok) {
      const why =
        decoded.problem === 'invalid-project-id'
          ? "its payload's id is not a Snowflake"
          : 'it is not three base64url parts with an {id, bot, iat} payload';
      return fail(`service.token is not a project token: ${why}`, TOKEN_FIX);
    }
    const outcome = tokenOutcome(await deps.service());
    return outcome.status === 'ok' ? { ...outcome, details: { ...outcome.details, platformId: decoded.payload.id } } : outcome;
  },
};

/** What an answer's `Date` header says about this machine's clock. */
export function clockOutcome(answer: ServiceAnswer): CheckOutcome {
  if (answer.kind === 'unreachable') return skip(`no answer from the service to compare clocks with (${answer.reason})`);
  const measure = measureSkew(answer.date, answer.sentAt, answer.receivedAt);
  if (measure === undefined) {
    return warn(
      'the service answered without a usable Date header: the clocks were not compared',
      'check that nothing between here and the service strips headers, and that service.v1 is the service',
    );
  }
  const details = {
    skewMs: measure.skewMs,
    uncertaintyMs: measure.uncertaintyMs,
    warnAboveMs: DOCTOR_DEFAULTS.skewWarnMs,
    failAboveMs: DOCTOR_DEFAULTS.skewFailMs,
  };
  const said = describeSkew(measure);
  switch (classifySkew(measure)) {
    case 'ok':
      return ok(said, details);
    case 'warn':
      return warn(
        `${said}: still inside the 300 s signature tolerance, but drifting`,
        'turn on time sync (timedatectl set-ntp true, chrony or ntpd)',
        details,
      );
    case 'fail':
      return fail(
        `${said}: beyond the 300 s tolerance, so signed webhook deliveries are refused as stale and batch timestamps may be refused`,
        "set this machine's clock right and keep it synced (timedatectl set-ntp true, chrony or ntpd)",
        details,
      );
  }
}

/** `service.clock`: this machine's clock against the service's `Date` header. */
export const clockCheck: DoctorCheck = {
  name: 'service.clock',
  paths: [],
  async run(deps: DoctorDeps) {
    return clockOutcome(await deps.service());
  },
};
