import { describe, expect, it } from 'vitest';
import { LAYER_GRAPH } from '../../scripts/docs/architecture.js';
import { fillBlocks } from '../../scripts/docs/blocks.js';
import { commandNames, sectionNames } from '../../scripts/docs/cli.js';
import { GENERATED_PAGES, renderPages } from '../../scripts/docs/pages.js';
import { configEnvironmentVariables } from '../../src/config/fields.js';

/**
 * The pages generated from the schema and the CLI. The layer graph of docs/architecture.md is
 * checked by `npm run check` (test/architecture/layers.check.ts), from the one cruise of src/ that
 * judges the layers: dependency-cruiser reads all of src/ for it.
 */
const PAGES = Object.keys(GENERATED_PAGES).filter((file) => file !== LAYER_GRAPH.page);

describe('the generated docs pages', () => {
  it('are what `npm run docs` writes (docs/configuration.md from the schema, docs/cli.md from the CLI)', async () => {
    const pages = await renderPages(PAGES);
    expect(pages.map(({ file }) => file)).toEqual(expect.arrayContaining(['docs/configuration.md', 'docs/cli.md']));
    for (const { file, committed, expected } of pages) {
      expect(committed, `${file} is stale: run \`npm run docs\` and commit the result`).toBe(expected);
    }
  });

  it('name every config key and its variable, and every command of the CLI', async () => {
    const pages = Object.fromEntries((await renderPages(PAGES)).map(({ file, expected }) => [file, expected]));
    for (const variable of configEnvironmentVariables()) {
      expect(pages['docs/configuration.md']).toContain(`| \`${variable.path}\` |`);
      expect(pages['docs/configuration.md']).toContain(`\`${variable.name}\``);
    }
    expect(commandNames()).toEqual(expect.arrayContaining(['run', 'demo', 'emulator', 'config', 'votes', 'webhooks']));
    for (const name of commandNames()) expect(pages['docs/cli.md']).toContain(`## \`listing-agent ${name}\``);
    // A subcommand with a help of its own gets it.
    expect(pages['docs/cli.md']).toContain('### `listing-agent webhooks test`');
  });
});

describe('fillBlocks', () => {
  const page = (content: string) => `# Page\n\n<!-- generated:a by \`npm run docs\`: do not edit -->\n${content}<!-- end generated:a -->\n\nafter\n`;

  it('replaces only what is between the markers', () => {
    expect(fillBlocks('p.md', page('old\n'), { a: 'new' })).toBe(page('\nnew\n\n'));
  });

  it('refuses a page that lost a block, has one twice, or has one no generator knows', () => {
    expect(() => fillBlocks('p.md', '# Page\n', { a: 'x' })).toThrow(/block 'a' is missing/);
    expect(() => fillBlocks('p.md', page('') + page(''), { a: 'x' })).toThrow(/appears twice/);
    expect(() => fillBlocks('p.md', page(''), {})).toThrow(/no generator for the block\(s\) a/);
  });
});

describe('sectionNames', () => {
  it('reads the rows of a help section, not their continuation lines', () => {
    const help = 'Usage: x\n\nSubcommands:\n  serve       run it\n              more about serve\n  rotate --webhook ID   rotate\n         [--project ID]\n\nOptions:\n  -h\n';
    expect(sectionNames(help, 'Subcommands')).toEqual(['serve', 'rotate']);
  });
});
