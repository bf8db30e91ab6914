import { ListingAgentError } from '../../errors.js';

/** Why an authorization callback carries no usable code. */
export type OAuthCallbackProblem =
  /** `error=access_denied`: the user cancelled (or could not grant any project). */
  | 'access_denied'
  /** Any other `error` the authorization server redirected with. */
  | 'authorization_error'
  /** `state` differs from the one sent: a forged or stale callback (CSRF); nothing in it is used. */
  | 'state_mismatch'
  /** Neither `code` nor `error`, or a parameter given twice. */
  | 'malformed';

const HINTS: Record<OAuthCallbackProblem, string> = {
  access_denied: 'The user cancelled the authorization (or manages no project to grant); ask them to authorize again if they meant to.',
  authorization_error:
    'The authorization request was refused; check client_id, redirect_uri, scopes and the PKCE challenge, then start again.',
  state_mismatch:
    "The callback's state is not the one of this authorization request: it may be forged (CSRF) or from another attempt. Start the " +
      "authorization again.",
  malformed: 'The callback URL holds no single code and no error; pass the full redirect URL the browser arrived at.',
};

/** An authorization callback that yields no code. `problem` says why; `error` is the server's code. */
export class OAuthCallbackError extends ListingAgentError {
  readonly problem: OAuthCallbackProblem;
  /** The `error` parameter of the callback, when it had one. */
  readonly error: string | undefined;
  /** The `error_description` parameter, when it had one (text from the server, shortened). */
  readonly errorDescription: string | undefined;

  constructor(problem: OAuthCallbackProblem, error?: string, errorDescription?: string) {
    // The description comes from a URL anyone can craft: shorten it so it cannot flood a log.
    const description = errorDescription?.slice(0, 200);
    const said = error ? ` (${error}${description ? `: ${description}` : ''})` : '';
    super(`oauth_${problem}`, `The OAuth authorization callback has no usable code${said}. ${HINTS[problem]}`);
    this.problem = problem;
    this.error = error;
    this.errorDescription = description;
  }
}
