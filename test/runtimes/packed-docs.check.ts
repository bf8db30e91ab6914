import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { unitSettings } from '../integration/deploy/deploy-files.js';
import { brokenLinks, codeBlocks, proseLines, ROOT, type Page } from '../docs/markdown.js';
import { unpackedPackage } from './packed.js';

/**
 * The package carries its documentation (issue 32, item 9): `npm pack`ed and unpacked, every
 * relative link of every Markdown file in the tarball (README, docs/, CHANGELOG, BENCHMARKS)
 * points at a file of the tarball, and its #anchor at a heading there; the files the README's
 * sidecar and systemd sections copy are in it, where its commands look for them.
 */

/** Every Markdown file of the unpacked package, relative to it. */
function shippedPages(root: string): Page[] {
  return readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.md') && !file.startsWith('node_modules/'))
    .sort()
    .map((file) => ({ file, text: readFileSync(join(root, file), 'utf8') }));
}

/** The deployment files a user copies (README "As a sidecar" and "As a systemd service"). */
const DEPLOY_FILES = ['deploy/compose.yaml', 'deploy/.env.example', 'deploy/listing-agent.service'];

/**
 * The package-relative paths the docs name under an install of it: `node_modules/listing-agent/X`
 * (the package in a bot's project) and `/opt/listing-agent/X` (the systemd install, the tarball
 * unpacked there), anywhere in a page, prose or code.
 */
function installedPaths(page: Page): { where: string; path: string }[] {
  const out: { where: string; path: string }[] = [];
  page.text.split('\n').forEach((line, index) => {
    for (const match of line.matchAll(/(?:node_modules\/listing-agent|\/opt\/listing-agent)\/([\w./-]*[\w/])/g)) {
      out.push({ where: `${page.file}:${index + 1}`, path: match[1]! });
    }
  });
  return out;
}

// npm pack (once per file) is slow on a loaded machine.
describe('the packed package carries its documentation', { timeout: 60_000 }, () => {
  it('every relative link of every shipped Markdown file resolves inside the tarball, with its anchor', async () => {
    const root = await unpackedPackage();
    const pages = shippedPages(root);
    const files = pages.map((page) => page.file);
    for (const expected of ['README.md', 'CHANGELOG.md', 'BENCHMARKS.md', 'docs/README.md', 'docs/migrating.md', 'docs/library.md']) {
      expect(files).toContain(expected);
    }
    // Every page of the repository's docs/ is shipped, and the README's image too.
    const docs = readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.md'));
    expect(docs.filter((file) => !files.includes(`docs/${file}`))).toEqual([]);
    expect(existsSync(join(root, 'docs/img/status-page.png'))).toBe(true);
    expect(brokenLinks(pages, root)).toEqual([]);
  });

  it('holds the deployment files the README copies, as in the repository, and every path the docs name under an install', async () => {
    const root = await unpackedPackage();
    for (const file of DEPLOY_FILES) {
      expect(existsSync(join(root, file)), file).toBe(true);
      expect(readFileSync(join(root, file), 'utf8'), file).toBe(readFileSync(join(ROOT, file), 'utf8'));
    }
    const pages = shippedPages(root);
    const named = pages.flatMap(installedPaths);
    // The README's sidecar and systemd sections name each deployment file where the package puts it.
    const readme = pages.find((page) => page.file === 'README.md')!;
    for (const file of DEPLOY_FILES) expect(installedPaths(readme).map((p) => p.path), file).toContain(file);
    expect(named.filter(({ path }) => !existsSync(join(root, path))).map(({ where, path }) => `${where}: ${path}`)).toEqual([]);
  });

  it("runs the systemd unit's ExecStart from the tarball unpacked at /opt/listing-agent, as the README installs it", async () => {
    const root = await unpackedPackage();
    const readme = shippedPages(root).find((page) => page.file === 'README.md')!;
    const shell = codeBlocks(readme).filter((block) => block.lang === 'sh').map((block) => block.text).join('\n');
    // The README's install line unpacks the package's tarball into /opt/listing-agent.
    expect(shell).toMatch(/tar -xzf [^\n]*npm pack listing-agent[^\n]*-C \/opt\/listing-agent --strip-components=1/);
    const unit = unitSettings(readFileSync(join(root, 'deploy/listing-agent.service'), 'utf8'));
    const script = unit.get('Service.ExecStart')![0]!.split(' ').find((word) => word.startsWith('/opt/listing-agent/'))!;
    expect(script).toBe('/opt/listing-agent/dist/cli/main.js');
    expect(existsSync(join(root, script.slice('/opt/listing-agent/'.length)))).toBe(true);
    // Prose says where the files are for a bot that installed the package.
    expect(proseLines(readme).some((line) => line.text.includes('node_modules/listing-agent/deploy/'))).toBe(true);
  });
});
