/**
 * Just enough Markdown for the docs tests: the pages (README.md and docs/), their fenced code
 * blocks with the info string, inline code spans, links and heading anchors. The docs are written
 * plainly (fences at the start of a line, no nested fences), and this reads them that way.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root directory, with a trailing slash. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface Page {
  /** Relative to the root: `README.md`, `docs/cli.md`. */
  file: string;
  text: string;
}

/** README.md and every page under docs/. */
export function docPages(): Page[] {
  const files = ['README.md', ...readdirSync(`${ROOT}docs`, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
  return files.sort().map((file) => ({ file, text: readFileSync(`${ROOT}${file}`, 'utf8') }));
}

export interface CodeBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The first word of the info string (`ts`, `json`, `text`), or '' when there is none. */
  lang: string;
  /** The rest of the info string, word by word (`fragment`, `seed`, `deploy/compose.yaml`). */
  attributes: string[];
  /** The block's content, without the fences. */
  text: string;
}

const FENCE = /^(`{3,}|~{3,})(.*)$/;

/** The fenced code blocks of a page, in order. */
export function codeBlocks(page: Page): CodeBlock[] {
  const lines = page.text.split('\n');
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const [lang = '', ...attributes] = open[2]!.trim().split(/\s+/).filter(Boolean);
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !lines[i]!.startsWith(open[1]!); i++) body.push(lines[i]!);
    blocks.push({ file: page.file, line: start + 1, lang, attributes, text: body.join('\n') });
  }
  return blocks;
}

/** The lines of a page outside its code blocks, with their 1-based numbers. */
export function proseLines(page: Page): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | undefined;
  page.text.split('\n').forEach((text, index) => {
    const match = FENCE.exec(text);
    if (fence === undefined && match) fence = match[1];
    else if (fence !== undefined && text.startsWith(fence)) fence = undefined;
    else if (fence === undefined) out.push({ line: index + 1, text });
  });
  return out;
}

/** The inline code spans of the prose (single backticks; a span may run over a line break). */
export function codeSpans(page: Page): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  const lines = proseLines(page);
  // Paragraph by paragraph, so that a span broken over two lines is read whole.
  let paragraph: { line: number; text: string }[] = [];
  const flush = () => {
    const text = paragraph.map((l) => l.text).join('\n');
    for (const match of text.matchAll(/(`+)([^`]+?)\1/g)) {
      const line = paragraph[0]!.line + text.slice(0, match.index).split('\n').length - 1;
      out.push({ line, text: match[2]!.replace(/\s+/g, ' ').trim() });
    }
    paragraph = [];
  };
  for (const line of lines) {
    if (line.text.trim() === '') flush();
    else paragraph.push(line);
  }
  flush();
  return out;
}

/** The targets of the prose's Markdown links `[text](target)`, outside code spans. */
export function links(page: Page): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  for (const { line, text } of proseLines(page)) {
    const prose = text.replace(/`[^`]*`/g, '``');
    for (const match of prose.matchAll(/\]\(([^)\s]+)\)/g)) out.push({ line, target: match[1]! });
  }
  return out;
}

/** The anchors GitHub gives a page's headings (`## The config file` -> `the-config-file`). */
export function headingAnchors(page: Page): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const { text } of proseLines(page)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!heading) continue;
    const base = heading[1]!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/**
 * Every broken relative link of `pages` (files relative to `root`): `file:line: target (why)`. A
 * link must point at a file inside `root`, and its `#anchor` at a heading of that file.
 * test/docs/links.test.ts runs it on the repository, test/runtimes/packed-docs.check.ts on the
 * unpacked tarball.
 */
export function brokenLinks(pages: readonly Page[], root: string = ROOT): string[] {
  const broken: string[] = [];
  for (const page of pages) {
    for (const { line, target } of links(page)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:: not checked here
      const [path = '', anchor] = target.split('#', 2);
      const file = path === '' ? join(root, page.file) : join(root, dirname(page.file), decodeURIComponent(path));
      const where = `${page.file}:${line}: ${target}`;
      if (!file.startsWith(root) || !existsSync(file)) {
        broken.push(`${where} (no file ${relative(root, file)})`);
        continue;
      }
      if (anchor === undefined || !file.endsWith('.md') || statSync(file).isDirectory()) continue;
      const anchors = headingAnchors({ file: relative(root, file), text: readFileSync(file, 'utf8') });
      if (!anchors.has(anchor)) broken.push(`${where} (no heading with the anchor #${anchor} in ${relative(root, file)})`);
    }
  }
  return broken;
}
