import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * One undici in a discord.js 14 bot (issue 25), the offline half: npm keeps an installed copy that
 * satisfies a range, so our undici range must admit every version discord.js 14 and
 * @discordjs/rest ask for (`^6.27.0`), and the transport's tests must run on the floor of it
 * (`undici-6` in devDependencies, test/integration/client/undici-6.test.ts). The online half, a
 * real `npm install` of discord.js and the packed package: `npm run check:undici`
 * (scripts/undici-dedupe.ts).
 */

const REPO = join(import.meta.dirname, '..', '..');
const manifest = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as { name: string; version: string; dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
const ours = manifest(join(REPO, 'package.json'));

type Version = [number, number, number];

/** `^x.y.z` (x ≥ 1), the only form read here: any other fails loudly rather than guessing. */
function caret(range: string): Version {
  const match = /^\^([1-9]\d*)\.(\d+)\.(\d+)$/.exec(range.trim());
  if (!match) throw new Error(`"${range}": this check reads ^x.y.z ranges only; read the new form here`);
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}
const version = (text: string): Version => caret(`^${text}`);
const notBelow = (a: Version, b: Version) => a[0] === b[0] && (a[1] !== b[1] ? a[1] > b[1] : a[2] >= b[2]);
const ourRanges = () => ours.dependencies!.undici!.split('||').map(caret);
/** Does our range admit every version of `theirs` (a caret range)? */
const admitsAll = (theirs: string) => ourRanges().some((floor) => notBelow(caret(theirs), floor));
const admits = (installed: string) => ourRanges().some((floor) => notBelow(version(installed), floor));

/** Where Node finds package `name` from `dir` (node_modules upwards; no `exports` map in the way). */
function packageDir(name: string, dir: string): string {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, 'node_modules', name, 'package.json'))) return join(at, 'node_modules', name);
    if (dirname(at) === at) throw new Error(`${name} is not installed above ${dir}: run npm ci`);
  }
}

describe('the undici range', () => {
  it('admits every undici that discord.js 14 and @discordjs/rest ask for, and the copies installed for them', () => {
    const discord = packageDir('discord.js', REPO);
    for (const dir of [discord, packageDir('@discordjs/rest', discord)]) {
      const { name, dependencies } = manifest(join(dir, 'package.json'));
      const asked = dependencies!.undici!;
      expect(admitsAll(asked), `${name} asks for undici ${asked}; ours is ${ours.dependencies!.undici}`).toBe(true);
      const copy = manifest(join(packageDir('undici', dir), 'package.json')).version;
      expect(admits(copy), `${name}'s undici ${copy}`).toBe(true);
    }
  });

  it('has undici 6 and 7, and the transport is tested on the floor of 6 (`undici-6`) and on the 7 installed', () => {
    expect(ourRanges().map(([major]) => major)).toEqual([6, 7]);
    const alias = ours.devDependencies!['undici-6']!;
    expect(alias).toBe(`npm:undici@${ourRanges()[0]!.join('.')}`);
    expect(admits(manifest(join(REPO, 'node_modules', 'undici', 'package.json')).version)).toBe(true);
    expect(() => caret('>=6')).toThrow(/reads \^x\.y\.z ranges only/);
    expect(admitsAll('^6.26.0')).toBe(false);
    expect(admitsAll('^8.0.0')).toBe(false);
  });
});
