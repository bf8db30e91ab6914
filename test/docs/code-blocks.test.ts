import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildConfig } from '../../src/config/loader.js';
import { seedSchema } from '../../src/emulator/seed.js';
import { codeBlocks, docPages, ROOT, type CodeBlock } from './markdown.js';

/**
 * Every code block of README.md and docs/ that is meant to run is checked here, but the `ts` ones,
 * which `npm run check` type-checks (code-blocks-types.check.ts); output samples are `text` blocks
 * (their `$ listing-agent ...` lines are checked by cli-lines.test.ts). How a block is marked is
 * described in docs/development.md, "The docs, generated and tested".
 */

const blocks = docPages().flatMap(codeBlocks);
const where = (block: CodeBlock) => `${block.file}:${block.line}`;
const isFragment = (block: CodeBlock) => block.attributes.includes('fragment');

// mermaid: a diagram, generated (docs/architecture.md), not run. js: a CommonJS bot's lines, as the
// packed-package test runs them (test/runtimes/bots/cjs-bot.cjs), not type-checked here.
const KNOWN_LANGS = new Set(['ts', 'json', 'sh', 'text', 'yaml', 'mermaid', 'js']);

describe('the code blocks of README.md and docs/', () => {
  it('each name a language the checks know (text for output samples)', () => {
    const unnamed = blocks.filter((b) => !KNOWN_LANGS.has(b.lang)).map((b) => `${where(b)}: '${b.lang}'`);
    expect(unnamed, `name one of ${[...KNOWN_LANGS].join(', ')} after the opening fence`).toEqual([]);
    expect(blocks.filter((b) => b.lang === 'ts' && !isFragment(b)).length).toBeGreaterThan(10);
  });

  it('json: config files load with the real loader, seeds parse with the seed schema', () => {
    const problems: string[] = [];
    for (const block of blocks.filter((b) => b.lang === 'json')) {
      try {
        const value = JSON.parse(block.text) as unknown;
        if (block.attributes.includes('seed')) seedSchema.parse(value);
        else if (!isFragment(block)) configFrom(block.text);
      } catch (error) {
        problems.push(`${where(block)}: ${describeError(error)}`);
      }
    }
    expect(problems, 'a json block is a config file unless marked `json seed` or `json fragment`').toEqual([]);
  });

  it('yaml with a path: each line is a line of that file, in order (an excerpt)', () => {
    const excerpts = blocks.filter((b) => b.lang === 'yaml');
    expect(excerpts.length).toBeGreaterThan(0);
    const problems: string[] = [];
    for (const block of excerpts) {
      const [path] = block.attributes;
      if (path === undefined) {
        problems.push(`${where(block)}: name the file it is an excerpt of (\`\`\`yaml deploy/compose.yaml)`);
        continue;
      }
      const missing = notAnExcerpt(block.text, readFileSync(join(ROOT, path), 'utf8'));
      if (missing !== undefined) problems.push(`${where(block)}: '${missing}' is not in ${path} (or not in this order)`);
    }
    expect(problems).toEqual([]);
  });

});

/** Loads a config file's text with the real loader: every `${VAR}` and the token set. */
function configFrom(text: string) {
  const env: Record<string, string> = { LISTING_AGENT_SERVICE_TOKEN: 'example.project.token' };
  for (const match of text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) env[match[1]!] = 'example.value.0123456789';
  return buildConfig({ file: { name: 'snippet.json', text }, env });
}

function describeError(error: unknown): string {
  if (error && typeof error === 'object' && 'problems' in error && Array.isArray(error.problems)) {
    return (error.problems as { path: string; message: string }[]).map((p) => `${p.path}: ${p.message}`).join('; ');
  }
  return error instanceof Error ? error.message : String(error);
}

/** The first line of `excerpt` not found (trimmed) in `file` after the previous one, or undefined. */
export function notAnExcerpt(excerpt: string, file: string): string | undefined {
  const lines = file.split('\n').map((l) => l.trim());
  let at = 0;
  for (const line of excerpt.split('\n').map((l) => l.trim())) {
    if (line === '' || line.startsWith('#')) continue;
    const found = lines.indexOf(line, at);
    if (found < 0) return line;
    at = found + 1;
  }
  return undefined;
}
