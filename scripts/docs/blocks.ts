/**
 * Generated blocks in hand-written Markdown pages. A block is everything between
 *
 *   <!-- generated:NAME by `npm run docs`: do not edit -->
 *   <!-- end generated:NAME -->
 *
 * and `npm run docs` rewrites it with what the generator prints, byte for byte; the text around
 * the markers stays as people wrote it. A test fails when a committed block differs.
 */

/** The opening marker of block `name`. */
export const beginMarker = (name: string): string => `<!-- generated:${name} by \`npm run docs\`: do not edit -->`;
/** The closing marker of block `name`. */
export const endMarker = (name: string): string => `<!-- end generated:${name} -->`;

const ANY_MARKER = /<!-- (?:end )?generated:([a-z0-9-]+)/g;

/**
 * `text` with each named block replaced by its content (between a blank line after the opening
 * marker and one before the closing marker). Throws when a block is missing, appears twice or is
 * not closed, or when the page has a block no generator knows: a page must not go stale silently.
 */
export function fillBlocks(file: string, text: string, blocks: Readonly<Record<string, string>>): string {
  const named = new Set([...text.matchAll(ANY_MARKER)].map((match) => match[1]!));
  const unknown = [...named].filter((name) => !Object.hasOwn(blocks, name));
  if (unknown.length > 0) throw new Error(`${file}: no generator for the block(s) ${unknown.join(', ')}: remove the markers or add a generator in scripts/docs/`);
  let out = text;
  for (const [name, content] of Object.entries(blocks)) {
    const begin = beginMarker(name);
    const end = endMarker(name);
    const start = out.indexOf(begin);
    if (start < 0) throw new Error(`${file}: the block '${name}' is missing; put these two lines where it goes:\n${begin}\n${end}`);
    if (out.indexOf(begin, start + begin.length) >= 0) throw new Error(`${file}: the block '${name}' appears twice`);
    const stop = out.indexOf(end, start);
    if (stop < 0) throw new Error(`${file}: the block '${name}' is not closed with ${end}`);
    out = `${out.slice(0, start)}${begin}\n\n${content.trimEnd()}\n\n${out.slice(stop)}`;
  }
  return out;
}

/** A Markdown table cell: pipes escaped, `<x>` outside code spans written as text (not as HTML). */
export function cell(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, index) => (index % 2 === 1 ? part : part.replace(/</g, '&lt;')))
    .join('')
    .replace(/\|/g, '\\|')
    .replace(/\s*\n\s*/g, ' ');
}

/** A Markdown table. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`)].join('\n');
}
