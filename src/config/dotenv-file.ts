import { parse } from 'dotenv';

/**
 * A `.env` file read with dotenv's own `parse`, plus the check dotenv does not make: dotenv skips
 * a line it cannot read without a word, so `TOKEN abc` (a missing `=`) would silently leave TOKEN
 * unset. Here such a line is reported by number. Pure: the text comes in.
 */

/** The outcome of {@link parseDotenv}: the values, or the numbers of the lines that are not `KEY=value`. */
export type DotenvResult = { values: Record<string, string> } | { badLines: number[] };

// dotenv's forms: `KEY=value`, `export KEY=value`, `KEY: value` (keys of word characters, `.`, `-`).
const ASSIGNMENT = /^\s*(?:export\s+)?[\w.-]+(?:\s*=|:\s)/;
const OPENING_QUOTE = /^\s*(?:export\s+)?[\w.-]+(?:\s*=\s*|:\s+)(["'`])(.*)$/;

/** The line after the one closing a quoted value opened on `lines[start]`, or undefined. */
function endOfQuoted(lines: readonly string[], start: number): number | undefined {
  const open = OPENING_QUOTE.exec(lines[start]!);
  if (!open) return undefined;
  const quote = open[1]!;
  const unescaped = (text: string) => new RegExp(`(^|[^\\\\])${quote}`).test(text);
  if (unescaped(open[2]!)) return undefined; // closed on its own line
  for (let i = start + 1; i < lines.length; i++) {
    if (unescaped(lines[i]!)) return i + 1;
  }
  // Never closed: dotenv reads the line as an unquoted value, and so do we.
  return undefined;
}

/** Parses `.env` text; a non-blank, non-comment line that is not `KEY=value` is a bad line. */
export function parseDotenv(text: string): DotenvResult {
  const lines = text.replace(/^\ufeff/, '').split(/\r\n|\r|\n/);
  const badLines: number[] = [];
  for (let i = 0; i < lines.length; ) {
    const line = lines[i]!;
    if (line.trim() === '' || line.trim().startsWith('#')) {
      i++;
      continue;
    }
    if (!ASSIGNMENT.test(line)) {
      badLines.push(i + 1);
      i++;
      continue;
    }
    i = endOfQuoted(lines, i) ?? i + 1;
  }
  return badLines.length > 0 ? { badLines } : { values: parse(text) };
}
