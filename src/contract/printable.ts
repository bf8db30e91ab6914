/**
 * Text from outside (the service, a delivery, a hook's answer) made safe to print on a terminal
 * or in one line of text: a control character could otherwise end the line and forge the next
 * one, clear the screen, or retitle the terminal (issue 34, item 5).
 */

/**
 * C0 controls (newlines and tabs included), DEL and C1 controls, the line and paragraph separators,
 * the marks and overrides that reorder text (U+061C, U+200E, U+200F, U+202A to U+202E, U+2066 to
 * U+2069), and lone surrogates.
 */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]|[\ud800-\udfff]/gu;

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escape(character: string): string {
  const named = NAMED[character];
  if (named !== undefined) return named;
  const code = character.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * `text` with every character that is not printable on one line written as an escape: `\n`, `\r`,
 * `\t`, `\x1b` (ESC), `\u2028`. Everything else, other languages and emoji included, is kept.
 * What the CLI prints of an outside string, and what a log message quotes of a refused value,
 * goes through it.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, escape);
}
