#!/usr/bin/env node
import { hostname } from 'node:os';
import { runCli } from './run-cli.js';
import { errorMessage } from '../errors.js';

// The only module that touches `process` (with healthcheck.ts, the container's probe): argv,
// environment, signals and the exit code.

// The agent handles its own failures; anything that still escapes is reported, never fatal.
process.on('unhandledRejection', (reason) => {
  process.stderr.write(`listing-agent: unhandled rejection: ${errorMessage(reason)}\n`);
});
const stopRequested = new Promise<string>((resolve) => {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(130);
    stopping = true;
    resolve(signal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
});

runCli(process.argv.slice(2), {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  env: process.env,
  cwd: process.cwd(),
  stopRequested,
  logStream: process.stdout,
  isTTY: process.stdout.isTTY === true,
  owner: { pid: process.pid, host: hostname() },
  isProcessAlive(pid) {
    try {
      process.kill(pid, 0);
      return true;
    } catch (error) {
      // EPERM: it exists but belongs to someone else.
      return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
  },
}).then(
  (code) => {
    process.exitCode = code;
    // Signal handlers keep nothing alive, but a command that finished should not wait for one.
    process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(`listing-agent: unexpected failure: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
