import type { TestProject } from 'vitest/node';
import { prepareSystemPrograms } from './prepare.js';
import { SYSTEM_PROGRAMS } from './programs.js';
import './provided.js';

/**
 * vitest's globalSetup (vitest.config.ts): before any test file runs, finds the system programs
 * the tests need (programs.ts), installs the missing ones with apt-get when it may, and provides
 * their paths to the test files (`programPath()`), which skip their tests without them. Each
 * program found is also put in its override variable (`REDIS_SERVER`, ...), so processes the
 * tests spawn find the same one. The SKIPPING lines are printed again after the run's summary.
 */
export default function setup(project: TestProject): () => void {
  const prepared = prepareSystemPrograms(SYSTEM_PROGRAMS, {
    env: process.env,
    root: process.getuid?.() === 0,
    write: (text) => process.stderr.write(text),
  });
  for (const program of SYSTEM_PROGRAMS) {
    const path = prepared.paths[program.name];
    if (path) process.env[program.envOverride] = path;
  }
  project.provide('systemPrograms', { ...prepared.paths });
  return () => {
    for (const line of prepared.skipLines) process.stderr.write(`${line}\n`);
  };
}
