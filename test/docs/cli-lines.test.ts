import { describe, expect, it } from 'vitest';
import { runCliInProcess } from '../helpers/cli.js';
import { codeBlocks, codeSpans, docPages, type Page } from './markdown.js';

/** One `listing-agent ...` command shown in the docs. */
interface ShownCommand {
  where: string;
  /** The words after `listing-agent`, as the shell would split them. */
  args: string[];
}

// `listing-agent ...` at the start of a command: after `$ ` (a transcript), `npx `, variable
// assignments (`LISTING_AGENT_X=... npx listing-agent run`).
const COMMAND = /^(?:\$\s+)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:npx\s+)?listing-agent(?:\s+(.*))?$/;

/** The shell's words of `text`, quotes removed; usage brackets and `...` dropped. */
export function words(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) {
    const word = match[1] ?? match[2] ?? match[3]!.replace(/[[\]]/g, '').replace(/\.\.\.$/, '');
    if (word !== '') out.push(word);
  }
  return out;
}

/** The command line of `line` (`# comment`, `| pipe`, `&& next` cut off), or undefined. */
function shownCommand(line: string): string[] | undefined {
  const match = COMMAND.exec(line.trim());
  if (!match) return undefined;
  const rest = (match[1] ?? '').split(/\s+#|\s\|\s|\s&&\s|\s;\s|\s>/)[0]!;
  return words(rest);
}

/** Every `listing-agent` command a page shows: in shell blocks, in transcripts (`$ ...`), in code spans. */
export function shownCommands(page: Page): ShownCommand[] {
  const out: ShownCommand[] = [];
  for (const block of codeBlocks(page)) {
    if (['ts', 'typescript', 'json', 'yaml'].includes(block.lang)) continue;
    const shell = ['sh', 'bash', 'shell', 'console'].includes(block.lang);
    // Continuation lines (`\` at the end) are one command.
    const lines = block.text.replace(/\\\n/g, ' ').split('\n');
    lines.forEach((line, index) => {
      // In output samples only the transcript's commands (`$ ...`) are commands.
      if (!shell && !line.startsWith('$ ')) return;
      const args = shownCommand(line);
      if (args) out.push({ where: `${page.file}:${block.line + 1 + index}`, args });
    });
  }
  for (const span of codeSpans(page)) {
    const args = shownCommand(span.text);
    // `listing-agent <command> --help`: a placeholder, not a command.
    if (args && !args[0]?.startsWith('<')) out.push({ where: `${page.file}:${span.line}`, args });
  }
  return out;
}

/**
 * Why the CLI would refuse `args`, or undefined when it accepts the command and its options. The
 * command runs with `--help` added: each command parses its options strictly and then prints its
 * help, so nothing runs, and an unknown command, subcommand or option is a usage error (exit 2).
 */
async function refusal(args: string[]): Promise<string | undefined> {
  const { code, stdout, stderr } = await runCliInProcess([...args, '--help']);
  if (code === 0 && stdout.includes('Usage:')) return undefined;
  return `exit ${code}: ${stderr.trim() || stdout.trim()}`;
}

describe('the listing-agent command lines of README.md and docs/', () => {
  it('name commands and options the CLI accepts', async () => {
    const shown = docPages().flatMap(shownCommands);
    // The README's two commands and the docs' transcripts are all found.
    expect(shown.length).toBeGreaterThan(40);
    expect(shown.map((s) => s.args.join(' '))).toEqual(expect.arrayContaining(['demo', 'run --config config.json', 'votes retry --config config.json']));
    const refused: string[] = [];
    for (const { where, args } of shown) {
      const why = await refusal(args);
      if (why !== undefined) refused.push(`${where}: listing-agent ${args.join(' ')}: ${why}`);
    }
    expect(refused).toEqual([]);
  }, 60_000);

  it('are told apart from output and placeholders, and a wrong one is refused', async () => {
    const page = {
      file: 'x.md',
      text: [
        '```sh',
        'LISTING_AGENT_STATS_ENABLED=true \\',
        '  npx listing-agent run   # the daemon',
        '```',
        '',
        '```text',
        '$ listing-agent votes check 2109 --source discord --config c.json',
        'listing-agent config check: 2 problems:',
        '```',
        '',
        'See `listing-agent <command> --help`, or `listing-agent stats post [--dry-run]`.',
      ].join('\n'),
    };
    expect(shownCommands(page)).toEqual([
      { where: 'x.md:2', args: ['run'] },
      { where: 'x.md:7', args: ['votes', 'check', '2109', '--source', 'discord', '--config', 'c.json'] },
      { where: 'x.md:11', args: ['stats', 'post', '--dry-run'] },
    ]);
    expect(await refusal(['votes', 'list', '--since', '24h'])).toBeUndefined();
    expect(await refusal(['votes', 'list', '--sinse', '24h'])).toMatch(/^exit 2: .*--sinse/);
    expect(await refusal(['vote', 'list'])).toMatch(/^exit 2: .*unknown command 'vote'/);
    expect(await refusal(['votes', 'lists'])).toMatch(/^exit 2/);
  });
});
