import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dockerStages, readRepoFile, REPO_ROOT, type DockerInstruction } from './deploy-files.js';
import { configEnvironmentVariables } from '../../../src/config/fields.js';
import { spawnCli } from '../../helpers/cli.js';
import { setupBot, startTestEmulator } from '../../helpers/emulator.js';
import { freePort } from '../../helpers/ports.js';

/**
 * The Dockerfile and deploy/compose.yaml, read as text. No Docker engine runs where these tests
 * run (CI included), so no image is built: these checks pin the directives the deployment relies
 * on, and that the runtime stage needs no devDependency; the HEALTHCHECK's command is run as a
 * process against the daemon, with the image's environment.
 */

const DOCKERFILE = readRepoFile('Dockerfile');
const COMPOSE = readRepoFile('deploy/compose.yaml');
const DOCKERIGNORE = readRepoFile('.dockerignore')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'));

const stages = dockerStages(DOCKERFILE);
const runtime = stages.at(-1)!;
const args = (stage: DockerInstruction[], keyword: string) => stage.filter((i) => i.keyword === keyword).map((i) => i.args);

describe('Dockerfile', () => {
  // Node.js 24 LTS (supported to April 2028): Node.js 20 reached its end of life in April 2026.
  it('builds in one node:24-bookworm-slim stage and runs in another', () => {
    expect(stages).toHaveLength(2);
    expect(stages[0]![0]!.args).toBe('node:24-bookworm-slim AS build');
    expect(runtime[0]!.args).toMatch(/^node:24-bookworm-slim( AS \w+)?$/);
    const buildRuns = args(stages[0]!, 'RUN').join('\n');
    expect(buildRuns).toMatch(/npm ci\b/);
    expect(buildRuns).toContain('npm run build');
  });

  it('installs production dependencies only, without scripts, and takes dist/ from the build', () => {
    const runs = args(runtime, 'RUN').join('\n');
    expect(runs).toMatch(/npm ci\b[^\n]*--omit=dev/);
    expect(runs).toMatch(/npm ci\b[^\n]*--ignore-scripts/);
    expect(args(runtime, 'COPY')).toContain('--from=build /app/dist ./dist');
    // The status page reads its script and style from assets/status/ beside dist/ at run time.
    expect(args(runtime, 'COPY')).toContain('assets/status ./assets/status');
    // dist/api/version.js reads ../../package.json at run time.
    expect(args(runtime, 'COPY')).toContain('package.json package-lock.json ./');
    expect(args(runtime, 'WORKDIR')).toEqual(['/app']);
  });

  it('runs as node, with the state volume, health on 0.0.0.0:9464, a HEALTHCHECK and SIGTERM', () => {
    const keywords = runtime.map((i) => i.keyword);
    expect(args(runtime, 'USER')).toEqual(['node']);
    expect(keywords.indexOf('USER')).toBeLessThan(keywords.indexOf('ENTRYPOINT'));
    expect(args(runtime, 'VOLUME')).toEqual(['/var/lib/listing-agent']);
    const env = args(runtime, 'ENV').join(' ');
    expect(env).toContain('LISTING_AGENT_STATE_DIRECTORY=/var/lib/listing-agent');
    expect(env).toContain('LISTING_AGENT_HEALTH_LISTEN=0.0.0.0:9464');
    expect(env).toContain('LISTING_AGENT_LOG_FORMAT=json');
    // The idle footprint's settings, the same as the systemd unit's (BENCHMARKS.md, "Footprint").
    expect(env).toContain('MALLOC_MMAP_THRESHOLD_=131072');
    expect(args(runtime, 'EXPOSE')).toEqual(['9464']);
    const [healthcheck] = args(runtime, 'HEALTHCHECK');
    expect(healthcheck).toMatch(/^--interval=30s --timeout=5s --start-period=15s --retries=3 CMD \[/);
    expect(args(runtime, 'STOPSIGNAL')).toEqual(['SIGTERM']);
    expect(args(runtime, 'ENTRYPOINT')).toEqual(['["node", "--max-semi-space-size=2", "/app/dist/cli/main.js"]']);
    expect(args(runtime, 'CMD')).toEqual(['["run"]']);
    // The volume's directory exists and belongs to node before VOLUME, so named volumes inherit it.
    const volumeAt = keywords.indexOf('VOLUME');
    const chown = runtime.findIndex((i) => i.keyword === 'RUN' && i.args.includes('chown node:node /var/lib/listing-agent'));
    expect(chown).toBeGreaterThan(-1);
    expect(chown).toBeLessThan(volumeAt);
  });

  it('copies only files that exist and that .dockerignore lets through', () => {
    const sources = stages
      .flatMap((stage) => args(stage, 'COPY'))
      .filter((a) => !a.startsWith('--from='))
      .flatMap((a) => a.split(' ').slice(0, -1));
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect(existsSync(join(REPO_ROOT, source)), source).toBe(true);
      expect(DOCKERIGNORE, source).not.toContain(source);
    }
    for (const ignored of ['node_modules', 'dist', 'state', '.git', '.env']) expect(DOCKERIGNORE).toContain(ignored);
  });

  it('needs no devDependency at run time: dist/ imports only node builtins and dependencies (optional peers only by import())', () => {
    const pkg = JSON.parse(readRepoFile('package.json')) as { dependencies: Record<string, string>; peerDependenciesMeta?: Record<string, { optional?: boolean }> };
    const allowed = new Set([...Object.keys(pkg.dependencies), ...builtinModules]);
    // An optional peer (discord.js) is the bot's own: loaded by import() only on the path that was
    // handed the bot's object, never by the daemon the image runs.
    const optionalPeers = new Set(Object.entries(pkg.peerDependenciesMeta ?? {}).filter(([, meta]) => meta.optional === true).map(([name]) => name));
    const dist = join(REPO_ROOT, 'dist');
    expect(existsSync(dist), 'dist/ missing: run npm run build').toBe(true);
    const imported = new Set<string>();
    const files = readdirSync(dist, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.js'));
    for (const file of files) {
      const code = readRepoFile(`dist/${file}`);
      // Static imports and re-exports at the start of a line (tsc's output), dynamic import() and
      // require(): not any `from '...'` inside a string, such as an error message.
      const statements = /^(?:import|export)\b[^;]*?\bfrom\s*['"]([^'"]+)['"]|^import\s+['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)|\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/gm;
      for (const match of code.matchAll(statements)) {
        const specifier = (match[1] ?? match[2] ?? match[3] ?? match[4])!;
        if (specifier.startsWith('.') || specifier.startsWith('node:')) continue;
        if (match[3] !== undefined && optionalPeers.has(specifier)) continue;
        const parts = specifier.split('/');
        imported.add(specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!);
      }
    }
    expect(imported.size).toBeGreaterThan(0);
    expect([...imported].filter((name) => !allowed.has(name))).toEqual([]);
  });
});

describe('deploy/compose.yaml (checked as text: no YAML parser is a dependency)', () => {
  /** The lines of one top-level service block, by its two-space-indented key. */
  function service(name: string): string {
    const start = COMPOSE.indexOf(`\n  ${name}:\n`);
    expect(start, name).toBeGreaterThan(-1);
    const rest = COMPOSE.slice(start + 1);
    const end = rest.slice(1).search(/\n {2}\S|\n\S/);
    return end < 0 ? rest : rest.slice(0, end + 1);
  }

  it('indents with spaces only', () => {
    expect(COMPOSE).not.toMatch(/^\t/m);
  });

  it('runs the agent beside a placeholder bot, on a shared network, with state in a named volume', () => {
    expect(service('bot')).toContain('image: ghcr.io/example/my-bot:latest');
    const agent = service('listing-agent');
    expect(agent).toMatch(/^ {4}env_file: \.env$/m);
    expect(agent).toMatch(/^ {6}- listing-agent-state:\/var\/lib\/listing-agent$/m);
    expect(COMPOSE).toMatch(/^volumes:\n {2}listing-agent-state:/m);
    expect(agent).toMatch(/^ {4}restart: unless-stopped$/m);
    expect(agent).toMatch(/^ {4}stop_grace_period: 15s$/m);
    expect(agent).toMatch(/^ {4}networks: \[bot\]$/m);
    expect(service('bot')).toMatch(/^ {4}networks: \[bot\]$/m);
  });

  it("probes /healthz with the image's own HEALTHCHECK command", () => {
    expect(service('listing-agent')).toContain(`test: ["CMD", ${JSON.stringify(healthcheckCommand()).slice(1, -1).replace(/","/g, '", "')}]`);
  });

  it('names LISTING_AGENT_SERVICE_TOKEN in the example env file', () => {
    expect(readRepoFile('deploy/.env.example')).toMatch(/^LISTING_AGENT_SERVICE_TOKEN=$/m);
  });
});

describe('deploy/compose.many.yaml: two agents and Redis', () => {
  const MANY = readRepoFile('deploy/compose.many.yaml');

  it('indents with spaces only and runs redis with its append-only file on a volume', () => {
    expect(MANY).not.toMatch(/^\t/m);
    expect(MANY).toMatch(/^ {2}redis:\n {4}image: redis:7/m);
    expect(MANY).toContain('"--appendonly", "yes"');
    expect(MANY).toMatch(/^ {6}- redis-data:\/data$/m);
  });

  it('gives both agents the same Redis and different agent IDs and host ports', () => {
    expect(MANY.match(/LISTING_AGENT_STATE_REDIS_URL: redis:\/\/redis:6379/g)).toHaveLength(2);
    const ids = [...MANY.matchAll(/LISTING_AGENT_STATE_REDIS_AGENT_ID: (\S+)/g)].map((m) => m[1]);
    expect(ids).toEqual(['agent-a', 'agent-b']);
    const hostPorts = [...MANY.matchAll(/"127\.0\.0\.1:(\d+):\d+"/g)].map((m) => m[1]);
    expect(new Set(hostPorts).size).toBe(hostPorts.length);
  });

  it('sets only variables the agent knows', () => {
    const known = new Set(configEnvironmentVariables().map((v) => v.name));
    const used = [...MANY.matchAll(/^\s+(LISTING_AGENT_[A-Z0-9_]+):/gm)].map((m) => m[1]!);
    expect(used.length).toBeGreaterThan(0);
    expect(used.filter((name) => !known.has(name))).toEqual([]);
  });
});

/** The HEALTHCHECK's exec form: `CMD ["node", ...]`, as an argv. */
function healthcheckCommand(): string[] {
  const [healthcheck = ''] = args(runtime, 'HEALTHCHECK');
  return JSON.parse(/ CMD (\[.*\])$/.exec(healthcheck)![1]!) as string[];
}

/** The image's `ENV` settings, as the container's processes see them. */
function imageEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of args(runtime, 'ENV')) for (const match of line.matchAll(/(\w+)=(\S+)/g)) env[match[1]!] = match[2]!;
  return env;
}

/** Runs `argv` as the container would, on this checkout: `node` is this Node, /app is the repository (the image's WORKDIR, where dist/ is). */
function runInImage(argv: string[], env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  const [program, ...rest] = argv.map((arg) => (arg.startsWith('/app/') ? join(REPO_ROOT, arg.slice('/app/'.length)) : arg));
  expect(program).toBe('node');
  return new Promise((resolve) => {
    execFile(process.execPath, rest, { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 10_000 }, (error, _stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stderr });
    });
  });
}

describe("the image's HEALTHCHECK, run as a process with the image's environment", () => {
  /** `listing-agent run` as the image runs it, with `-e` settings over the image's ENV; resolves once its health server listens. */
  async function daemonWith(settings: Record<string, string>) {
    const emu = await startTestEmulator();
    const fx = setupBot(emu);
    const env = {
      ...imageEnvironment(),
      LISTING_AGENT_STATE_DIRECTORY: await mkdtemp(join(tmpdir(), 'la-container-state-')),
      LISTING_AGENT_SERVICE_TOKEN: fx.projectToken,
      LISTING_AGENT_SERVICE_V1: emu.urls.v1,
      LISTING_AGENT_SERVICE_V0: emu.urls.v0,
      ...settings,
    };
    const daemon = spawnCli(['run'], { env });
    await daemon.lineContaining('health server listening');
    return { daemon, env };
  }

  it('follows a port moved with -e LISTING_AGENT_HEALTH_LISTEN=0.0.0.0:<port>: healthy while the daemon runs, unhealthy once it stopped', async () => {
    expect(imageEnvironment().LISTING_AGENT_HEALTH_LISTEN).toBe('0.0.0.0:9464');
    const port = await freePort();
    const { daemon, env } = await daemonWith({ LISTING_AGENT_HEALTH_LISTEN: `0.0.0.0:${port}` });
    const healthy = await runInImage(healthcheckCommand(), env);
    expect(healthy, healthy.stderr).toEqual({ code: 0, stderr: '' });
    daemon.child.kill('SIGTERM');
    await daemon.exit();
    const gone = await runInImage(healthcheckCommand(), env);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain(`listing-agent healthcheck: http://127.0.0.1:${port}/healthz: no answer`);
  });

  it('asks ::1 for a daemon listening on [::]:<port>, and names a value that is not an address', async () => {
    const { env } = await daemonWith({ LISTING_AGENT_HEALTH_LISTEN: `[::]:${await freePort()}` });
    const healthy = await runInImage(healthcheckCommand(), env);
    expect(healthy, healthy.stderr).toEqual({ code: 0, stderr: '' });
    const wrong = await runInImage(healthcheckCommand(), { ...env, LISTING_AGENT_HEALTH_LISTEN: 'localhost' });
    expect(wrong).toEqual({ code: 1, stderr: 'listing-agent healthcheck: LISTING_AGENT_HEALTH_LISTEN=localhost: must be host:port (for example 127.0.0.1:9464) or a port\n' });
  });
});
