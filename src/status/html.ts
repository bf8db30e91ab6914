/**
 * HTML that cannot be injected into: every value put into an {@link html} template is escaped,
 * unless it is itself the result of one. Usernames, command names and error texts come from
 * outside the agent; the page puts none of them anywhere but text and quoted attributes.
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** `text` with `& < > " '` escaped: safe in element text and in a quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** Markup made by {@link html}: put into another template as is. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

function part(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(part).join('');
  return escapeHtml(String(value));
}

/**
 * A template tag: `` html`<td>${name}</td>` `` escapes `name`. Arrays are joined, `null`,
 * `undefined` and `false` are left out (for `${cond && html`...`}`).
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]!;
  values.forEach((value, index) => {
    out += part(value) + strings[index + 1]!;
  });
  return new SafeHtml(out);
}
