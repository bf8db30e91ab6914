/**
 * One cruise of src/ by dependency-cruiser, under the layer rules of `.dependency-cruiser.cjs`:
 * `npm run check` judges the layers by it and draws docs/architecture.md's layer graph from the
 * same result (test/architecture/layers.check.ts); `npm run docs` draws the graph from one too.
 */
import { createRequire } from 'node:module';
import { cruise, type ICruiseResult, type IConfiguration } from 'dependency-cruiser';
import { ROOT } from './docs/root.js';

const RULES = createRequire(import.meta.url)(`${ROOT}.dependency-cruiser.cjs`) as IConfiguration;

/** Cruises `src` under `cwd` (default: this repository) with the project's rules. */
export async function cruiseSrc(cwd = ROOT): Promise<ICruiseResult> {
  const before = process.cwd();
  process.chdir(cwd);
  try {
    const result = await cruise(['src'], {
      ruleSet: { forbidden: RULES.forbidden ?? [] },
      // Core modules too: `node:process` is what only-cli-touches-process looks for.
      includeOnly: '^src/|^(node:)?process$',
      tsPreCompilationDeps: true,
      validate: true,
    });
    return result.output as ICruiseResult;
  } finally {
    process.chdir(before);
  }
}

/** The rules a cruise found broken, one `rule: from -> to` per violation, sorted. */
export function ruleViolations(output: ICruiseResult): string[] {
  return output.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort();
}
