import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ICruiseResult } from 'dependency-cruiser';
import { afterAll, describe, expect, it } from 'vitest';
import { cruiseSrc, ruleViolations } from '../../scripts/cruise-src.js';
import { LAYER_GRAPH, layerGraph } from '../../scripts/docs/architecture.js';
import { fillBlocks } from '../../scripts/docs/blocks.js';

/**
 * The layers of src/ (`.dependency-cruiser.cjs`): the tree keeps them, docs/architecture.md draws
 * them as they are, and the rules can fail, as a planted tree that breaks each of them shows. One
 * cruise of src/ serves the rules and the drawing. `npm run lint:deps` prints the same check for
 * a person.
 */

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const temps: string[] = [];
afterAll(async () => {
  await Promise.all(temps.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** This tree's cruise, once for the file. */
let cruised: Promise<ICruiseResult> | undefined;
const thisTree = () => (cruised ??= cruiseSrc(REPO));

/** Cruises `src` under `cwd` with the project's rules; the rule names broken, one per violation. */
async function violations(cwd: string): Promise<string[]> {
  return ruleViolations(await cruiseSrc(cwd));
}

async function plant(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'la-layers-'));
  temps.push(dir);
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

describe('the layers of src/', () => {
  it('hold in this tree: no circle, no import up a layer, no capability importing another', async () => {
    expect(ruleViolations(await thisTree())).toEqual([]);
  }, 60_000);

  it('are drawn in docs/architecture.md as the tree has them', async () => {
    const committed = await readFile(join(REPO, LAYER_GRAPH.page), 'utf8');
    const expected = fillBlocks(LAYER_GRAPH.page, committed, { [LAYER_GRAPH.block]: layerGraph(await thisTree()) });
    expect(committed, `${LAYER_GRAPH.page} is stale: run \`npm run docs\` and commit the result`).toBe(expected);
  }, 60_000);

  it('are enforced: a planted tree that breaks each rule is caught', async () => {
    const dir = await plant({
      'src/contract/rule.ts': "import { ready } from '../runtime/ready.js';\nexport const rule = ready;\n",
      'src/runtime/ready.ts': "import { agent } from '../agent/agent.js';\nexport const ready = agent;\n",
      'src/agent/agent.ts': "export const agent = 1;\n",
      'src/store/file.ts': "import { gate } from '../leader/gate.js';\nexport const file = gate;\n",
      'src/leader/gate.ts': "export const gate = 1;\n",
      'src/webhooks/receiver.ts': "import { pipeline } from '../votes/pipeline.js';\nexport const receiver = pipeline;\n",
      'src/votes/pipeline.ts': "export const pipeline = 1;\n",
      'src/emulator/server.ts': "import { agent } from '../agent/agent.js';\nexport const server = agent;\n",
      'src/testing/kit.ts': "import { agent } from '../agent/agent.js';\nexport const kit = agent;\n",
      'src/index.ts': "import { kit } from './testing/kit.js';\nexport const root = kit;\n",
      'src/http/a.ts': "import { b } from './b.js';\nexport const a = 1 + b;\n",
      'src/http/b.ts': "import { a } from './a.js';\nexport const b = a;\n",
      'src/log/pid.ts': "import process from 'node:process';\nexport const pid = process.pid;\n",
      'tsconfig.json': '{ "compilerOptions": { "module": "NodeNext", "moduleResolution": "NodeNext" } }\n',
    });
    const broken = await violations(dir);
    for (const rule of [
      'contract-imports-nothing: src/contract/rule.ts -> src/runtime/ready.ts',
      'runtime-points-down: src/runtime/ready.ts -> src/agent/agent.ts',
      'infra-points-down: src/store/file.ts -> src/leader/gate.ts',
      'no-capability-imports-another: src/webhooks/receiver.ts -> src/votes/pipeline.ts',
      'emulator-is-a-sibling: src/emulator/server.ts -> src/agent/agent.ts',
      'testing-stands-on-the-emulator: src/testing/kit.ts -> src/agent/agent.ts',
      'only-entries-import-testing: src/index.ts -> src/testing/kit.ts',
      'no-circular: src/http/a.ts -> src/http/b.ts',
      'only-cli-touches-process: src/log/pid.ts -> process',
    ]) {
      expect(broken).toContain(rule);
    }
  }, 60_000);

  it('leave process to src/cli/: no other file of src/ names the process global', async () => {
    const { readdir } = await import('node:fs/promises');
    const files = (await readdir(join(REPO, 'src'), { recursive: true, encoding: 'utf8' })).filter((f) => f.endsWith('.ts') && !f.startsWith('cli/'));
    const touching: string[] = [];
    for (const file of files) {
      const code = await readFile(join(REPO, 'src', file), 'utf8');
      // Code, not comments: a line that starts a comment or continues one is not code.
      const lines = code.split('\n').filter((line) => !/^\s*(\/\/|\*|\/\*)/.test(line));
      // `process.env`, `globalThis.process`; not a module name such as './hooks/in-process.js'.
      if (lines.some((line) => /(?<![-/.\w])process\.[a-zA-Z]|\bglobalThis\.process\b/.test(line))) touching.push(file);
    }
    expect(touching).toEqual([]);
  });
});
