import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
// The built loader, as the daemon runs it (the suite builds first).
import { ConfigError } from '../../dist/config/errors.js';
import { loadConfig } from '../../dist/config/loader.js';
import { maskConfig } from '../../dist/config/mask.js';
import { CLI_PATH } from '../helpers/cli.js';
import { setupBot, startTestEmulator } from '../helpers/emulator.js';
import { between, crashSigns, freePort, pick, rng, secretValue, SEED, SHORT, sleep, tokenSecrets, Transcript } from '../helpers/reliability.js';

/**
 * Config fuzz: random mutations of a valid configuration (keys deleted, wrong types, huge and
 * negative numbers, bad durations, URLs and listen addresses, unknown keys, unicode, `${VAR}`
 * tricks, broken JSON text, stray LISTING_AGENT_* variables, malformed `.env` files). Each one
 * goes through the built loader in-process; a sample through `listing-agent config check` and
 * `listing-agent run` as child processes. Every outcome is a valid configuration (a start) or a
 * ConfigError with a one-line summary and every problem on a line with its path; never another
 * exception, a stack trace, a hang, or a secret in a message.
 */

const MUTATIONS = SHORT ? 2_000 : 20_000;
const CHECK_SAMPLE = SHORT ? 6 : 40;
const RUN_SAMPLE = SHORT ? 4 : 16;
/** One load may take this long at most (a catastrophic regex or a loop would show). */
const LOAD_LIMIT_MS = 1_000;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

describe('reliability: hostile input (config fuzz)', () => {
  it('every mutation of a valid config ends in a clear error or a valid start', { timeout: 600_000 }, async () => {
    const started = Date.now();
    const random = rng('config-fuzz');
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const cwd = await mkdtemp(join(tmpdir(), 'la-reliability-config-'));
    const transcript = new Transcript();
    const secrets: Record<string, string> = {
      ...tokenSecrets('service.token', fx.projectToken),
      'discord.token': secretValue('discordtoken'),
      'stats.push.key': secretValue('pushkey'),
      'votes.hooks[0].secret': secretValue('hooksecret'),
      'votes.hooks[0].authorization': secretValue('hookauth'),
      'webhooks.secrets[0]': `whs_${secretValue('current')}`,
      'webhooks.secrets[1]': `whs_${secretValue('previous')}`,
      'webhooks.legacyAuthorization': secretValue('legacyauth'),
      'ENV_SECRET (a ${VAR} value)': secretValue('envsecret'),
    };
    const [pushPort, webhookPort, healthPort] = [await freePort(), await freePort(), await freePort()];
    const base = (): { [key: string]: Json } => ({
      $schema: './config.schema.json',
      service: { v1: emu.urls.v1, v0: emu.urls.v0, token: fx.projectToken },
      discord: { token: secrets['discord.token']!, apiBaseUrl: 'http://127.0.0.1:1/api', applicationId: '300000000000000001' },
      stats: {
        enabled: true,
        source: 'push',
        interval: '30m',
        sampleInterval: '5m',
        jitter: '0s',
        mode: 'batch',
        skipUnchanged: true,
        v0: false,
        rest: { shardCount: 2, cacheTtl: '10m' },
        push: { listen: `127.0.0.1:${pushPort}`, path: '/stats', key: secrets['stats.push.key']!, staleAfter: '10m', shardCount: 2 },
      },
      commands: { enabled: false, source: 'file', file: 'commands.json', interval: '1h' },
      votes: {
        enabled: true,
        pollInterval: '60s',
        lookback: '12h',
        hooks: [
          { type: 'http', name: 'reward', url: 'http://127.0.0.1:1/reward', secret: '${ENV_SECRET}', authorization: secrets['votes.hooks[0].authorization']!, timeout: '5s', retries: 3 },
          { type: 'exec', name: 'credit', command: ['/bin/true'], timeout: '30s', retries: 1 },
        ],
        keepKeysFor: '1h',
      },
      webhooks: {
        enabled: true,
        listen: `127.0.0.1:${webhookPort}`,
        path: '/webhooks/listing',
        secrets: [secrets['webhooks.secrets[0]']!, secrets['webhooks.secrets[1]']!],
        legacyAuthorization: secrets['webhooks.legacyAuthorization']!,
        publicUrl: 'https://bot.example.com/webhooks/listing',
      },
      state: { directory: './state' },
      health: { enabled: true, listen: `127.0.0.1:${healthPort}` },
      log: { level: 'info', format: 'json' },
    });
    // (ENV_SECRET is referenced by a secret field only: a mutation that moved `${ENV_SECRET}` into a
    // plain field would rightly show its value, so the mutations use PLAIN_VALUE for that.)
    const baseEnv = { ENV_SECRET: secrets['ENV_SECRET (a ${VAR} value)']!, PLAIN_VALUE: 'plain-value' };

    // ---- Mutations.
    const BAD_DURATIONS = ['5x', '-1s', '1e9d', '', ' 5m', '5m ', '0', '999999999999999999999d', '1.5.5m', 'ms', '5mm', '9007199254740993ms', '1h30', '١٢s', '5 m', 'Infinityd', '0.0000001ms', '1'.repeat(400) + 's'];
    const BAD_URLS = ['ftp://x', 'http://', '://', 'javascript:alert(1)', 'http://[::1', 'http://exa mple.com', 'http://%', 'file:///etc/passwd', 'http://a:b@c/', 'ws://127.0.0.1/', '/relative', 'http://127.0.0.1:99999/'];
    const BAD_LISTEN = [':', '99999', 'host:', '[::1]:70000', '-1', 'a:b:c', '[]:1', ' 80', '127.0.0.1:', '65536', '::1:80', '0x50'];
    const UNICODE = ['\u0000', '\ud800', '🤖'.repeat(500), '\u202eevil', 'ß', '\u200b', 'é\u0301', '\r\n', '\\', '"', '\u2028'];
    const WRONG: Json[] = [null, true, false, 0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, "", "x", [], {}, [1, "a"], { a: 1 }];
    const VARS = ['${UNSET_VARIABLE}', '${', '$${x}', '${A}${B}', `\${${'A'.repeat(1_000)}}`, '${${X}}', 'a${PLAIN_VALUE}b', '${ENV_SECRET', '$', '${}', '${1}'];
    const KEYS = ['__proto__', 'constructor', 'prototype', 'tokne', 'enabeld', 'TOKEN', '', ' ', '🤖', 'a'.repeat(500), 'hooks', 'toString'];

    /** Every path to a value in `value`, as key lists. */
    const paths = (value: Json, at: (string | number)[] = []): (string | number)[][] => {
      const out: (string | number)[][] = [at];
      // Not into what an earlier mutation made huge: the config's own depth is 5.
      if (at.length >= 5) return out;
      if (Array.isArray(value)) value.slice(0, 4).forEach((v, i) => out.push(...paths(v, [...at, i])));
      else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...at, k]));
      return out;
    };
    const get = (root: Json, path: (string | number)[]): Json => path.reduce<Json>((v, k) => (v as never)[k], root);
    const set = (root: Json, path: (string | number)[], value: Json | undefined) => {
      const parent = get(root, path.slice(0, -1)) as never as Record<string | number, Json>;
      const key = path.at(-1)!;
      if (value === undefined) {
        if (Array.isArray(parent)) parent.splice(key as number, 1);
        else delete parent[key];
      } else parent[key] = value;
    };
    const deep = (depth: number): Json => (depth === 0 ? 1 : { a: deep(depth - 1) });
    /** Whether `config` prints as JSON in at most 2 MB: past that, a load is slow by its size alone, which tests nothing. */
    const printable = (config: Json): boolean => {
      try {
        return JSON.stringify(config, null, 2).length <= 2_000_000;
      } catch {
        return false;
      }
    };

    /** One structural mutation of `config` (in place); its name for the tally. */
    function mutate(config: { [key: string]: Json }): string {
      const all = paths(config).filter((p) => p.length > 0);
      const path = pick(random, all);
      const current = get(config, path);
      const op = between(random, 0, 9);
      switch (op) {
        case 0:
          set(config, path, undefined);
          return 'delete';
        case 1:
          set(config, path, structuredClone(pick(random, WRONG)));
          return 'wrong type';
        case 2:
          set(config, path, typeof current === 'string' && /^\d/.test(current) ? pick(random, BAD_DURATIONS) : pick(random, [-1, 0, 2 ** 31, 2 ** 53 + 1, 1e308, -0.5, 1e-300]));
          return 'bad number or duration';
        case 3:
          set(config, path, pick(random, BAD_URLS));
          return 'bad url';
        case 4:
          set(config, path, pick(random, BAD_LISTEN));
          return 'bad listen';
        case 5: {
          const parent = path.slice(0, -1);
          const target = get(config, parent);
          if (target !== null && typeof target === 'object' && !Array.isArray(target)) {
            Object.defineProperty(target, pick(random, KEYS), { value: pick(random, WRONG), enumerable: true, configurable: true, writable: true });
          }
          return 'unknown key';
        }
        case 6:
          set(config, path, typeof current === 'string' ? `${current}${pick(random, UNICODE)}` : pick(random, UNICODE));
          return 'unicode';
        case 7:
          set(config, path, random() < 0.5 ? 'x'.repeat(100_000) : deep(between(random, 50, 2_000)));
          return 'huge value';
        case 8:
          set(config, path, pick(random, VARS));
          return '${VAR}';
        default:
          // Many copies of a small value, a few of a big one (a config of gigabytes tests nothing). The copies share
          // the value: structuredClone overflows the stack on a value 2,000 deep (JSON.stringify and JSON.parse do not).
          set(config, path, Array.from({ length: between(random, 0, JSON.stringify(current ?? null).length > 1_000 ? 3 : 300) }, () => current));
          return 'array of it';
      }
    }

    /** A text-level mutation of the JSON text. */
    function mutateText(text: string): { text: string; op: string } {
      switch (between(random, 0, 5)) {
        case 0:
          return { text: text.slice(0, between(random, 0, text.length - 1)), op: 'truncated' };
        case 1: {
          const i = between(random, 0, text.length);
          return { text: `${text.slice(0, i)}${String.fromCharCode(between(random, 0, 0xffff))}${text.slice(i)}`, op: 'stray character' };
        }
        case 2:
          return { text: pick(random, [`\ufeff${text}`, `${text} trailing`, `// comment\n${text}`, text.replace('{', '{"service":1,'), text.replace(/"retries":\s*\d+/, '"retries": 1e400'), text.replace(/"shardCount":\s*\d+/, '"shardCount": -0')]), op: 'text edit' };
        case 3:
          return { text: pick(random, ['[]', 'null', '"str"', '42', '', ' ', '{}', 'true', '{"service":{}}']), op: 'not a config' };
        case 4:
          return { text: text.replace(/"(\w+)":/, (_m, k: string) => `"${k}":1,"${k}":`), op: 'duplicate key' };
        default:
          return { text: `${'['.repeat(between(random, 1, 50_000))}`, op: 'nested' };
      }
    }

    const ENV_NAMES = ['LISTING_AGENT_STATS_ENABLED', 'LISTING_AGENT_VOTES_HOOKS', 'LISTING_AGENT_HEALTH_LISTEN', 'LISTING_AGENT_SERVICE_TOKEN', 'LISTING_AGENT_TOKEN', 'LISTING_AGENT_WEBHOOKS_SECRETS', 'LISTING_AGENT_VOTES_POLL_INTERVAL', 'LISTING_AGENT_CONFIG', 'LISTING_AGENT_STATS_REST_SHARD_COUNT', 'LISTING_AGENT_'];
    const ENV_VALUES = ['maybe', 'not json', '[{"url":1}]', '{}', 'abc', '', '1,2,,3', '-5', '99999999999999999999', '${PLAIN_VALUE}', '\u0000', 'true', '[]', '[{"command":[]}]'];
    const DOTENV = ['A=1\nthis is not a line\n', 'ENV_SECRET=\n', '=x', 'LISTING_AGENT_LOG_LEVEL=loud', '\u0000', 'export X=1', 'X="unterminated', 'LISTING_AGENT_STATS_ENABLE=true'];

    /** The mutated inputs of one case: a config text, an environment, maybe a .env. */
    function makeCase(): { text: string; env: Record<string, string>; dotenv?: string; ops: string[] } {
      let config: { [key: string]: Json };
      let ops: string[];
      // A mutation inside a value an earlier array shares is made in every copy: drawn again past 2 MB.
      do {
        config = base();
        ops = [];
        for (let n = between(random, 1, 3); n > 0; n -= 1) ops.push(mutate(config));
      } while (!printable(config));
      let text = JSON.stringify(config, null, 2);
      if (random() < 0.15) {
        const edit = mutateText(text);
        text = edit.text;
        ops.push(edit.op);
      }
      const env: Record<string, string> = { ...baseEnv };
      if (random() < 0.15) {
        env[pick(random, ENV_NAMES)] = pick(random, ENV_VALUES);
        ops.push('environment');
      }
      if (random() < 0.05) {
        ops.push('.env');
        return { text, env, dotenv: pick(random, DOTENV), ops };
      }
      return { text, env, ops };
    }

    /** What is wrong with an outcome (empty: a clear error or a valid configuration). */
    function judge(outcome: { ok: true; masked: string } | { ok: false; error: unknown }, ms: number): string[] {
      const wrong: string[] = [];
      if (ms > LOAD_LIMIT_MS) wrong.push(`took ${ms} ms`);
      if (outcome.ok) return wrong;
      const { error } = outcome;
      if (!(error instanceof ConfigError)) return [...wrong, `threw ${(error as Error)?.constructor?.name}: ${String((error as Error)?.message ?? error).slice(0, 300)}`];
      if (error.summary.includes('\n') || error.summary.trim() === '') wrong.push(`summary is not one line: ${JSON.stringify(error.summary.slice(0, 300))}`);
      if (error.problems.length === 0) wrong.push('no problem listed');
      for (const p of error.problems) {
        if (typeof p.message !== 'string' || p.message.trim() === '' || /[\r\n]/.test(p.message)) wrong.push(`problem message not one line: ${JSON.stringify(p).slice(0, 300)}`);
        if (error.reason === 'invalid' && p.path === '' && !/^(the configuration|expected|must)/i.test(p.message)) wrong.push(`problem without a path: ${JSON.stringify(p).slice(0, 300)}`);
      }
      return wrong;
    }

    // ---- In-process: every mutation through the loader.
    const tally = new Map<string, { valid: number; invalid: number }>();
    const failures: string[] = [];
    let valid = 0;
    let invalid = 0;
    const configPath = resolve(cwd, 'agent.json');
    const dotenvPath = resolve(cwd, '.env');
    /** Candidates for the child processes: half of each sample valid, half not. */
    const candidates = { valid: [] as ReturnType<typeof makeCase>[], invalid: [] as ReturnType<typeof makeCase>[] };
    for (let i = 0; i < MUTATIONS; i += 1) {
      const c = makeCase();
      const readFile = async (path: string) => {
        if (path === configPath) return c.text;
        if (path === dotenvPath && c.dotenv !== undefined) return c.dotenv;
        throw Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), { code: 'ENOENT' });
      };
      const t0 = performance.now();
      let outcome: { ok: true; masked: string } | { ok: false; error: unknown };
      try {
        const loaded = await loadConfig({ file: 'agent.json', env: c.env, cwd, readFile });
        outcome = { ok: true, masked: JSON.stringify(maskConfig(loaded.config)) };
        transcript.add(`case ${i} masked config`, outcome.masked);
        valid += 1;
      } catch (error) {
        outcome = { ok: false, error };
        if (error instanceof ConfigError) transcript.add(`case ${i} error`, [error.summary, ...error.problems.map((p) => `${p.path}: ${p.message}`)].join('\n'));
        else transcript.add(`case ${i} error`, String((error as Error)?.message ?? error));
        invalid += 1;
      }
      const ms = Math.round(performance.now() - t0);
      const pool = candidates[outcome.ok ? 'valid' : 'invalid'];
      if (pool.length < 200 && c.text.length < 200_000) pool.push(c);
      for (const op of c.ops) {
        const entry = tally.get(op) ?? { valid: 0, invalid: 0 };
        entry[outcome.ok ? 'valid' : 'invalid'] += 1;
        tally.set(op, entry);
      }
      for (const w of judge(outcome, ms)) if (failures.length < 30) failures.push(`case ${i} (${c.ops.join(', ')}): ${w}`);
    }

    // ---- Child processes: `config check` and `run` for a sample.
    const cli = (args: string[], c: ReturnType<typeof makeCase>, dir: string, stopAfterMs?: number) =>
      new Promise<{ code: number | string | null; stdout: string; stderr: string; hung: boolean; started: boolean }>((done) => {
        // A NUL cannot be in a real process environment (spawn refuses it): such a value is tested
        // in-process above, and left out of what the child gets.
        const env = Object.fromEntries(Object.entries(c.env).filter(([, value]) => !value.includes('\u0000')));
        const child = spawn(process.execPath, [CLI_PATH, ...args], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH ?? '', ...env } });
        let stdout = '';
        let stderr = '';
        let hung = false;
        let started = false;
        // A valid start (the start line, or still running after 5 s when the log level hides it):
        // let it run a moment, then stop it as systemd would.
        const markStarted = () => {
          if (started) return;
          started = true;
          setTimeout(() => child.kill('SIGTERM'), stopAfterMs ?? 1_500);
        };
        const still = setTimeout(markStarted, 5_000);
        child.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
          if (stdout.includes('starting listing-agent')) markStarted();
        });
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        const timer = setTimeout(() => {
          hung = true;
          child.kill('SIGKILL');
        }, 30_000);
        child.on('exit', (code, signal) => {
          clearTimeout(timer);
          clearTimeout(still);
          done({ code: code ?? signal, stdout, stderr, hung, started });
        });
      });
    const half = (n: number, from: ReturnType<typeof makeCase>[]) => Array.from({ length: Math.min(n, from.length) }, () => from.splice(Math.floor(random() * from.length), 1)[0]!);
    const samples = [
      ...half(CHECK_SAMPLE / 2, candidates.valid),
      ...half(CHECK_SAMPLE / 2, candidates.invalid),
      ...half(RUN_SAMPLE / 2, candidates.valid),
      ...half(RUN_SAMPLE / 2, candidates.invalid),
    ];
    let checked = 0;
    let runs = 0;
    let runStarts = 0;
    for (const [index, c] of samples.entries()) {
      const dir = await mkdtemp(join(cwd, 'case-'));
      await writeFile(join(dir, 'agent.json'), c.text);
      if (c.dotenv !== undefined) await writeFile(join(dir, '.env'), c.dotenv);
      const asRun = index >= CHECK_SAMPLE;
      const result = await cli(asRun ? ['run', '--config', 'agent.json'] : ['config', 'check', '--config', 'agent.json'], c, dir);
      transcript.add(`${asRun ? 'run' : 'config check'} sample ${index} stdout`, result.stdout);
      transcript.add(`${asRun ? 'run' : 'config check'} sample ${index} stderr`, result.stderr);
      const what = `${asRun ? 'run' : 'config check'} sample ${index} (${c.ops.join(', ')})`;
      if (result.hung) failures.push(`${what}: hung`);
      const signs = crashSigns(`${result.stdout}\n${result.stderr}`);
      if (signs.length > 0) failures.push(`${what}: ${signs[0]}`);
      if (asRun) {
        runs += 1;
        if (result.started) {
          runStarts += 1;
          // Started: a clean stop (0), or a runtime failure in one line (a port, the state directory).
          if (result.code !== 0 && !(result.code === 1 && /^listing-agent run: .+\n$/.test(result.stderr))) failures.push(`${what}: started, then ended with ${String(result.code)}: ${result.stderr.slice(0, 300)}`);
        } else if (result.code !== 78 || !result.stderr.startsWith('listing-agent run: ')) {
          failures.push(`${what}: refused with ${String(result.code)}: ${result.stderr.slice(0, 300)}`);
        }
      } else {
        checked += 1;
        if (result.code === 0) {
          try {
            JSON.parse(result.stdout);
          } catch {
            failures.push(`${what}: exit 0 without a JSON config on stdout`);
          }
        } else if (result.code !== 1 || !result.stderr.startsWith('listing-agent config check: ')) {
          failures.push(`${what}: ended with ${String(result.code)}: ${result.stderr.slice(0, 300)}`);
        }
      }
      await sleep(10);
    }

    const hits = transcript.scan(secrets);
    const ops = [...tally]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([op, t]) => `${op}: ${t.valid + t.invalid} (${t.valid} valid)`)
      .join(', ');
    console.log(`config fuzz, by mutation: ${ops}`);
    console.log(
      `config fuzz: ${MUTATIONS} mutations (${valid} valid, ${invalid} clear errors), ${checked} 'config check' and ${runs} 'run' children (${runStarts} started), ` +
        `${failures.length} unclear outcomes, 0 crashes allowed, ${transcript.lines} lines scanned (${hits.length} secrets), ${Math.round((Date.now() - started) / 1000)} s (seed ${SEED})`,
    );
    expect(hits, 'secrets found in the captured output (source:line: secret name)').toEqual([]);
    expect(failures).toEqual([]);
    expect(valid).toBeGreaterThan(0);
    expect(invalid).toBeGreaterThan(0);
  });
});
