import { symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { botProject, type BotProject } from './packed.js';

/**
 * The packed package's types, as a TypeScript bot sees them with `skipLibCheck` off: the same
 * consumer as a CommonJS file (.cts: `import` compiles to `require`, resolved through the
 * `require` condition to dist/cjs/*.d.cts) and as an ES module (.mts), under `module` node16,
 * nodenext, bundler, and the old node10 resolution (main, types and typesVersions). A `.d.cts`
 * that re-exported the ES module declarations failed here under node16 with TS1479.
 */

const SUBPATHS = ['client', 'webhooks', 'stats', 'votes', 'commands', 'redis', 'config', 'runtime', 'emulator', 'testing'];

const CONSUMER = `import { createListingAgent, ListingAgentError, type ListingAgentOptions, type Vote } from 'listing-agent';
${SUBPATHS.map((subpath, i) => `import * as part${i} from 'listing-agent/${subpath}';`).join('\n')}
import { createListingClient } from 'listing-agent/client';
import { startEmulator } from 'listing-agent/emulator';

export const options: ListingAgentOptions = { token: 'a.b.c', autoStart: false };
export const agent = createListingAgent(options);
export const reward = (vote: Vote): string | null => vote.platformId;
export const isOurs = (error: unknown): boolean => error instanceof ListingAgentError;
export const parts = [${SUBPATHS.map((_, i) => `part${i}`).join(', ')}];
export const later = async () => {
  const emulator = await startEmulator();
  const client = createListingClient({ projectToken: 'a.b.c', v1BaseUrl: emulator.urls.v1 });
  await client.close();
  await emulator.close();
};
`;

const BASE: ts.CompilerOptions = { target: ts.ScriptTarget.ES2022, strict: true, skipLibCheck: false, noEmit: true, types: ['node'], esModuleInterop: true };

const SETTINGS: Array<[string, ts.CompilerOptions, string[]]> = [
  ['node16', { module: ts.ModuleKind.Node16, moduleResolution: ts.ModuleResolutionKind.Node16 }, ['consumer.cts', 'consumer.mts']],
  ['nodenext', { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext }, ['consumer.cts', 'consumer.mts']],
  ['bundler', { module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler }, ['consumer.mts']],
  ['node10', { module: ts.ModuleKind.CommonJS, moduleResolution: ts.ModuleResolutionKind.Node10 }, ['consumer.ts']],
];

/** One bot project for every setting: the package installed, @types/node beside it, the consumers. */
let made: Promise<BotProject> | undefined;
function consumerProject(): Promise<BotProject> {
  made ??= (async () => {
    const project = await botProject('commonjs');
    await symlink(join(import.meta.dirname, '..', '..', 'node_modules', '@types'), join(project.dir, 'node_modules', '@types'), 'dir');
    for (const file of ['consumer.cts', 'consumer.mts', 'consumer.ts']) await writeFile(join(project.dir, file), CONSUMER);
    return project;
  })();
  return made;
}

describe('the packed package types a TypeScript bot', () => {
  it.each(SETTINGS)('module %s: CommonJS and ES module files, every subpath, no error', { timeout: 60_000 }, async (_name, settings, files) => {
    const project = await consumerProject();
    const program = ts.createProgram(files.map((file) => join(project.dir, file)), { ...BASE, ...settings });
    // The consumer and every declaration file of the package, checked (its dependencies' are not:
    // checking all of them takes a minute, and they are not ours).
    const ours = program.getSourceFiles().filter((file) => !file.fileName.includes('/node_modules/') || file.fileName.includes('/node_modules/listing-agent/dist/'));
    const diagnostics = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics(), ...ours.flatMap((file) => [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)])];
    const errors = diagnostics.map((d) => `${d.file?.fileName.replace(project.dir, '') ?? ''}: TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
    expect(errors).toEqual([]);
    // The CommonJS file resolved to the CommonJS declarations, the ES module one to the ESM ones.
    const resolved = (from: string) => program.getSourceFiles().map((f) => f.fileName).filter((name) => name.includes('/listing-agent/dist/') && name.endsWith(from));
    if (files.includes('consumer.cts')) expect(resolved('cjs/index.d.cts')).toHaveLength(1);
    if (files.includes('consumer.mts')) expect(resolved('dist/index.d.ts')).toHaveLength(1);
  });
});
