import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Readers for the deployment files (Dockerfile, compose.yaml, the systemd unit) in tests. */

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The built CLI entry of this checkout (`npm test` builds before running vitest). */
export const CLI_PATH = fileURLToPath(new URL('../../../dist/cli/main.js', import.meta.url));

export function readRepoFile(path: string): string {
  return readFileSync(new URL(path, new URL('../../../', import.meta.url)), 'utf8');
}

/**
 * A systemd unit's settings as `Section.Key` -> every value assigned, in order (comments and
 * blank lines dropped, `\` continuations joined).
 */
export function unitSettings(text: string): Map<string, string[]> {
  const settings = new Map<string, string[]>();
  let section = '';
  const lines = text.replace(/\\\n/g, ' ').split('\n');
  for (const raw of lines) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header) {
      section = header[1]!;
      continue;
    }
    const equals = line.indexOf('=');
    if (equals < 0) throw new Error(`not a key=value line: ${line}`);
    const key = `${section}.${line.slice(0, equals).trim()}`;
    const values = settings.get(key) ?? [];
    values.push(line.slice(equals + 1).trim());
    settings.set(key, values);
  }
  return settings;
}

/** One Dockerfile instruction: its keyword (upper case) and the rest of the logical line. */
export interface DockerInstruction {
  keyword: string;
  args: string;
}

/** A Dockerfile's build stages, each a list of instructions starting with its `FROM`. */
export function dockerStages(text: string): DockerInstruction[][] {
  const stages: DockerInstruction[][] = [];
  const logical = text
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  for (const line of logical) {
    const match = /^(\S+)\s*(.*)$/.exec(line)!;
    const instruction = { keyword: match[1]!.toUpperCase(), args: match[2]!.replace(/\s+/g, ' ') };
    if (instruction.keyword === 'FROM') stages.push([]);
    if (stages.length === 0) throw new Error(`instruction before FROM: ${line}`);
    stages.at(-1)!.push(instruction);
  }
  return stages;
}
