// Module hooks that let a child process run the project's TypeScript as it is (no build): each
// `.ts` file is transpiled on load (types stripped only, as vitest does), and a `./x.js` import
// from a `.ts` file finds `./x.ts`. Registered by ts-register.mjs: `node --import <it> file.ts`.
// The transform is oxc's (rolldown, which vitest's vite brings; ~0.1 s to load), else the
// TypeScript compiler's (~1-2 s to load on a busy machine, too slow for several children at once).
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const transpile = await import('rolldown/utils').then(
  ({ transformSync }) => (path, source) => {
    const result = transformSync(path, source, { lang: 'ts' });
    if (result.errors.length > 0) throw new Error(`${path}: ${result.errors.map((e) => e.message).join('; ')}`);
    return result.code;
  },
  async () => {
    const { default: ts } = await import('typescript');
    return (path, source) =>
      ts.transpileModule(source, {
        fileName: path,
        compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, verbatimModuleSyntax: true, sourceMap: false },
      }).outputText;
  },
);

export async function resolve(specifier, context, nextResolve) {
  if (context.parentURL?.endsWith('.ts') && specifier.startsWith('.') && specifier.endsWith('.js')) {
    const url = new URL(specifier, context.parentURL);
    if (!existsSync(fileURLToPath(url))) {
      const tsUrl = new URL(`${url.href.slice(0, -3)}.ts`);
      if (existsSync(fileURLToPath(tsUrl))) return { url: tsUrl.href, shortCircuit: true };
    }
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const path = fileURLToPath(url);
  return { format: 'module', source: (await transpile)(path, await readFile(path, 'utf8')), shortCircuit: true };
}
