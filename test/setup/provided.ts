import { inject } from 'vitest';
import type { ProgramName } from './programs.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Each system program's executable, or null when its test files are skipped (global-setup.ts). */
    systemPrograms: Record<string, string | null>;
  }
}

/**
 * The executable the global setup found or installed for `name`, or undefined when it is missing
 * and the files that need it skip their tests: `describe.skipIf(!programPath('redis-server'))`.
 * Throws when the global setup did not run (a vitest config without it), rather than letting
 * every file that needs a program skip without a word.
 */
export function programPath(name: ProgramName): string | undefined {
  const provided = inject('systemPrograms') as Record<string, string | null> | undefined;
  if (provided === undefined) {
    throw new Error(`no system programs provided: add globalSetup: ['./test/setup/global-setup.ts'] to this vitest config (${name} is needed)`);
  }
  return provided[name] ?? undefined;
}
