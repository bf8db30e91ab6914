/**
 * Writes or checks the API report of every entry in package.json's `exports` (`api/<name>.api.md`),
 * with @microsoft/api-extractor over the built declarations in dist/. `npm run check` runs the check
 * (test/architecture/public-surface.check.ts): a public name added, removed or changed fails it until
 * `npm run api:update` rewrites the reports, so the surface changes only on purpose and the diff
 * shows how. Run `npm run build` first.
 *
 *   node --import ./test/helpers/ts-register.mjs scripts/api-report.ts [--update]
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { CompilerState, Extractor, ExtractorConfig, ExtractorLogLevel, type ExtractorMessage } from '@microsoft/api-extractor';

/** One public entry: its report's name and its declaration file. */
export interface ApiEntry {
  name: string;
  declarations: string;
}

/** What the check found for one entry. */
export interface ApiEntryResult {
  name: string;
  changed: boolean;
  problems: string[];
}

/** The entries of `exports`: `.` is `index`, `./client` is `client`. */
export function apiEntries(root: string): ApiEntry[] {
  const manifest = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
  const entries: ApiEntry[] = [];
  for (const [subpath, target] of Object.entries(manifest.exports)) {
    // The ES module declarations (`import.types`); the `require` side's .d.cts are a copy of them.
    const types = typeof target === 'object' && target !== null ? (target as { import?: { types?: unknown } }).import?.types : undefined;
    if (typeof types !== 'string') continue;
    const name = subpath === '.' ? 'index' : subpath.slice(2).replaceAll('/', '-');
    entries.push({ name, declarations: resolve(root, types) });
  }
  return entries;
}

function configFor(root: string, entry: ApiEntry, reportFolder: string): ExtractorConfig {
  return ExtractorConfig.prepare({
    configObjectFullPath: resolve(root, 'api-extractor.json'),
    packageJsonFullPath: resolve(root, 'package.json'),
    configObject: {
      projectFolder: root,
      mainEntryPointFilePath: entry.declarations,
      compiler: { tsconfigFilePath: resolve(root, 'tsconfig.build.json') },
      apiReport: {
        enabled: true,
        reportFileName: `${entry.name}.api.md`,
        reportFolder,
        reportTempFolder: resolve(root, 'node_modules/.cache/api-report'),
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Warning } },
        extractorMessageReporting: {
          default: { logLevel: ExtractorLogLevel.Warning, addToApiReportFile: false },
          // A type that a public signature names must be exported: runApiReports passes it when another
          // entry exports it (the root's options name the client of `./client`, for one) and fails the
          // run when none does, so a bot owner can always import what a signature names.
          'ae-forgotten-export': { logLevel: ExtractorLogLevel.Warning, addToApiReportFile: false },
          // Release tags (@public/@beta) are not used: the subpath says what is public.
          'ae-missing-release-tag': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
          // TSDoc coverage and {@link}s to internal names are the source's business, not the surface's.
          'ae-undocumented': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
          'ae-unresolved-link': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
        },
        tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None, addToApiReportFile: false } },
      },
    },
  });
}

/** The TypeScript program's calls that {@link exportedByAnEntry} makes (api-extractor's own TypeScript). */
interface Program {
  getSourceFile(path: string): object | undefined;
  getTypeChecker(): { getSymbolAtLocation(node: object): object | undefined; getExportsOfModule(module: object): Array<{ name: string }> };
}

/** Every name that some entry exports: a type named by another entry's signatures is importable from there. */
function exportedByAnEntry(program: Program, entries: readonly ApiEntry[]): Set<string> {
  const checker = program.getTypeChecker();
  const names = new Set<string>();
  for (const entry of entries) {
    const file = program.getSourceFile(entry.declarations);
    const module = file && checker.getSymbolAtLocation(file);
    if (module) for (const symbol of checker.getExportsOfModule(module)) names.add(symbol.name);
  }
  return names;
}

/** The symbol of an `ae-forgotten-export` message (`The symbol "X" needs to be exported ...`). */
const forgottenSymbol = (message: ExtractorMessage) => /The symbol "([^"]+)"/.exec(message.text)?.[1];

/**
 * Runs api-extractor on every entry, sharing one compiler state; `update` rewrites the reports.
 * A type that an entry's signatures name but no entry exports is a problem of that entry.
 * `reportFolder` (default `<root>/api`) is where the committed reports are.
 */
export function runApiReports(root: string, update: boolean, reportFolder = resolve(root, 'api')): ApiEntryResult[] {
  const entries = apiEntries(root);
  const configs = entries.map((entry) => configFor(root, entry, reportFolder));
  const first = configs[0];
  if (!first) return [];
  const compilerState = CompilerState.create(first, { additionalEntryPoints: entries.map((entry) => entry.declarations) });
  const exported = exportedByAnEntry(compilerState.program as Program, entries);
  return entries.map((entry, index) => {
    const problems: string[] = [];
    const result = Extractor.invoke(configs[index]!, {
      localBuild: update,
      compilerState,
      showVerboseMessages: false,
      messageCallback: (message: ExtractorMessage) => {
        // console-* messages narrate the run (a report copied by --update), they are not problems.
        const narration = message.messageId.startsWith('console-');
        const forgotten = message.messageId === 'ae-forgotten-export' ? forgottenSymbol(message) : undefined;
        if (forgotten !== undefined && exported.has(forgotten)) {
          message.handled = true;
          return;
        }
        if (!narration && (message.logLevel === ExtractorLogLevel.Warning || message.logLevel === ExtractorLogLevel.Error)) problems.push(message.formatMessageWithLocation(root));
        message.handled = true;
      },
    });
    return { name: entry.name, changed: result.apiReportChanged, problems };
  });
}

const invokedDirectly = process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.dirname, 'api-report.ts');
if (invokedDirectly) {
  const update = process.argv.includes('--update');
  const results = runApiReports(resolve(import.meta.dirname, '..'), update);
  let failed = false;
  for (const result of results) {
    const state = result.changed ? (update ? 'rewritten' : 'CHANGED: run npm run api:update and commit api/') : 'unchanged';
    console.log(`${result.name.padEnd(10)} ${state}`);
    for (const problem of result.problems) console.log(`  ${problem}`);
    if ((result.changed && !update) || result.problems.length > 0) failed = true;
  }
  process.exitCode = failed ? 1 : 0;
}
