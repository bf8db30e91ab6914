import type { EmulatorContext } from './context.js';
import type { Reply } from './http.js';
import { escapeHtml } from './http.js';
import type { AuthorizeRequest } from './oauth-core.js';
import { canManageProject } from './state.js';

/** Options of {@link renderConsentPage}. */
export interface ConsentPageOptions {
  /** The user preselected in the sign-in list (`login_as`); default none. */
  loginAs?: string | undefined;
  /** A line shown above the form; default none. */
  notice?: string;
}

/** Query parameters the form sets itself instead of carrying them as hidden fields. */
const FORM_FIELDS = new Set(['login_as', 'project_id', 'decision']);

/**
 * The consent page: a GET form back to `/oauth2/authorize` that keeps every parameter as a hidden
 * field and lets a person pick a user (`login_as`) and a project, then Approve or Cancel. Stands in
 * for the service's sign-in and consent screens; every value is escaped.
 */
export function renderConsentPage(emu: EmulatorContext, request: AuthorizeRequest, options: ConsentPageOptions = {}): Reply {
  const e = escapeHtml;
  const { users, projects } = emu.state;
  const hidden = [...request.query]
    .filter(([name]) => !FORM_FIELDS.has(name))
    .map(([name, value]) => `<input type="hidden" name="${e(name)}" value="${e(value)}">`)
    .join('\n');
  const userOptions = [...users.values()]
    .map((u) => `<option value="${e(u.id)}"${u.id === options.loginAs ? ' selected' : ''}>${e(u.username)} (${e(u.id)})</option>`)
    .join('\n');
  const projectOptions = [...projects.values()]
    .map((p) => {
      const managers = [...users.values()].filter((u) => canManageProject(p, u.id)).map((u) => u.username);
      if (managers.length === 0) return '';
      const selected = p.id === request.preselected?.id ? ' selected' : '';
      const label = `${p.name} (${p.platform} ${p.type}, ${p.id}) - managed by ${managers.join(', ')}`;
      return `<option value="${e(p.id)}"${selected}>${e(label)}</option>`;
    })
    .join('\n');
  const scopes = request.scopes.map((s) => `<li><code>${e(s)}</code></li>`).join('');
  const body = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Authorize ${e(request.application.client_id)}</title>
<style>body{font-family:sans-serif;max-width:40em;margin:2em auto}label{display:block;margin:1em 0}</style></head>
<body>
<h1>Authorize application</h1>
<p>The application <strong>${e(request.application.client_id)}</strong> asks for:</p>
<ul>${scopes}</ul>
<p>It will be sent back to <code>${e(request.redirectUri)}</code>.</p>
${options.notice ? `<p role="alert"><strong>${e(options.notice)}</strong></p>` : ''}
<form method="get" action="/oauth2/authorize">
${hidden}
<label>Sign in as <select name="login_as">${userOptions || '<option value="">(no users: create one in the admin ' +
  'API)</option>'}</select></label>
<label>Project <select name="project_id"><option value="">(the user's only project)</option>
${projectOptions}</select></label>
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="cancel">Cancel</button>
</form>
</body></html>`;
  return {
    status: 200,
    contentType: 'text/html; charset=utf-8',
    headers: {
      'cache-control': 'no-store',
      // The page grants access: nobody may frame it (clickjacking), and it loads nothing. No
      // form-action: browsers apply it to the redirect after submit, which goes to the client.
      'x-frame-options': 'DENY',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    },
    body,
  };
}
