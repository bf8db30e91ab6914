import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { brokenLinks, docPages, headingAnchors, links } from './markdown.js';

describe('links in README.md and docs/', () => {
  it('every relative link points at a file that exists, and every #anchor at a heading of it', () => {
    const pages = docPages();
    expect(pages.map((p) => p.file)).toContain('docs/README.md');
    expect(brokenLinks(pages)).toEqual([]);
  });

  it('every page of docs/ is reachable from the docs index', () => {
    const index = docPages().find((p) => p.file === 'docs/README.md')!;
    const linked = new Set(links(index).map(({ target }) => join('docs', target.split('#')[0]!)));
    const unlinked = docPages()
      .map((p) => p.file)
      .filter((file) => file.startsWith('docs/') && file !== 'docs/README.md' && !linked.has(file));
    expect(unlinked, 'add these pages to docs/README.md').toEqual([]);
  });

  it('finds a missing file and a missing anchor', () => {
    const page = { file: 'docs/x.md', text: '[a](cli.md#exit-codes) [b](nope.md) [c](cli.md#nope) [d](#here)\n\n## Here\n' };
    expect(brokenLinks([page])).toEqual(['docs/x.md:1: nope.md (no file docs/nope.md)', 'docs/x.md:1: cli.md#nope (no heading with the anchor #nope in docs/cli.md)', 'docs/x.md:1: #here (no file docs/x.md)']);
  });
});

describe('headingAnchors', () => {
  it('makes the anchors GitHub makes', () => {
    const anchors = headingAnchors({ file: 'x.md', text: '# The emulator\n## `${VAR}` in string values\n## In tests: `startEmulator`\n## The admin API (`/_emulator`)\n## Same\n## Same\n```sh\n# not a heading\n```\n' });
    expect([...anchors]).toEqual(['the-emulator', 'var-in-string-values', 'in-tests-startemulator', 'the-admin-api-_emulator', 'same', 'same-1']);
  });
});
