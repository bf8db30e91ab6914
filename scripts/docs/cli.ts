/**
 * The generated part of docs/cli.md: the CLI's own help texts, asked from the built CLI itself
 * (`runCli` of dist/, which `npm run docs` builds first: the sources use `await using`, which
 * Node 20 cannot run untranspiled), so that every command of its table, and every subcommand with
 * a help of its own, appears without a list kept here.
 */
import { Writable } from 'node:stream';
import { mainHelp, runCli } from '../../dist/cli/run-cli.js';

/** Runs the CLI in this process and returns what it printed on stdout (help never touches the world). */
async function helpOf(argv: string[]): Promise<string> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    env: {},
    cwd: process.cwd(),
    stopRequested: new Promise<string>(() => undefined),
    logStream: new Writable({ write: (_chunk, _encoding, done) => done() }),
    isTTY: false,
    owner: { pid: 0, host: 'docs' },
    isProcessAlive: () => false,
  });
  if (code !== 0) throw new Error(`listing-agent ${argv.join(' ')} exited with ${code}: ${stderr.trim()}`);
  return stdout;
}

/** The rows of a help's `<title>:` section (`Commands:`, `Subcommands:`): their first words. */
export function sectionNames(help: string, title: string): string[] {
  const lines = help.split('\n');
  const start = lines.indexOf(`${title}:`);
  if (start < 0) return [];
  const names: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '') break;
    // A row starts two spaces in; deeper lines continue the row above.
    const match = /^ {2}([a-z][a-z0-9-]*)/.exec(line);
    if (match) names.push(match[1]!);
  }
  return names;
}

/** The commands `listing-agent --help` lists (without `help` itself). */
export function commandNames(): string[] {
  return sectionNames(mainHelp(), 'Commands').filter((name) => name !== 'help');
}

const fence = (text: string) => `\`\`\`text\n${text.trimEnd()}\n\`\`\``;

/** The block `cli-help`: the main help, then each command's, then each subcommand's own help. */
export async function renderCliHelp(): Promise<string> {
  const parts = [`## \`listing-agent --help\`\n\n${fence(mainHelp())}`];
  for (const name of commandNames()) {
    const help = await helpOf(['help', name]);
    parts.push(`## \`listing-agent ${name}\`\n\n${fence(help)}`);
    for (const sub of sectionNames(help, 'Subcommands')) {
      const own = await helpOf([name, sub, '--help']);
      if (own !== help) parts.push(`### \`listing-agent ${name} ${sub}\`\n\n${fence(own)}`);
    }
  }
  return parts.join('\n\n');
}
