/**
 * The layers of src/, as rules: imports point down only, never in a circle, and no capability
 * imports another. The layers themselves are the table in scripts/layers.cjs (docs/architecture.md
 * draws them); test/architecture/layers.check.ts checks these rules in `npm run check`, and
 * `npm run lint:deps` prints the same check.
 */
const { LAYERS, EMULATOR: EMULATOR_LAYER, TESTING: TESTING_LAYER } = require('./scripts/layers.cjs');

const layer = (name) => LAYERS.find((l) => l.name === name).path;
const ENTRY = layer('entry');
const COMPOSITION = layer('composition');
const CAPABILITY = layer('capability');
const RUNTIME = layer('runtime');
const INFRA = layer('infrastructure');
const CONTRACT = layer('contract');
const EMULATOR = EMULATOR_LAYER.path;
const TESTING = TESTING_LAYER.path;

/** A rule forbidding imports from `from` to any of `to`. */
const upward = (name, comment, from, to) => ({ name, comment, severity: 'error', from: { path: from }, to: { path: to } });

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'Files that import each other in a loop: one of them is in the wrong place, or shares a piece that belongs lower.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    upward('contract-imports-nothing', 'contract/ and errors.ts are the ground floor: pure rules, no imports of the rest.', CONTRACT, [INFRA, RUNTIME, CAPABILITY, COMPOSITION, ENTRY, EMULATOR, TESTING].join('|')),
    upward('infra-points-down', 'Infrastructure (api, store, redis, http, discord, config, log, fs) imports only contract/ and itself.', INFRA, [RUNTIME, CAPABILITY, COMPOSITION, ENTRY, EMULATOR, TESTING].join('|')),
    upward('runtime-points-down', 'runtime/ knows no capability: capabilities import it, not the other way.', RUNTIME, [CAPABILITY, COMPOSITION, ENTRY, EMULATOR, TESTING].join('|')),
    upward('capability-points-down', 'A capability imports runtime/, infrastructure and contract/, never the agent that wires it.', CAPABILITY, [COMPOSITION, ENTRY, EMULATOR, TESTING].join('|')),
    {
      name: 'no-capability-imports-another',
      comment: 'Capabilities are wired by the agent; what two of them share belongs in runtime/ or below.',
      severity: 'error',
      from: { path: CAPABILITY },
      to: { path: CAPABILITY, pathNot: '^src/$1/' },
    },
    upward('composition-points-down', 'The agent and the doctor are used by the entries (cli, demo, the package entries), never the reverse.', COMPOSITION, [ENTRY, EMULATOR, TESTING].join('|')),
    {
      name: 'emulator-is-a-sibling',
      comment: 'The emulator stands on contract/ and http/ only: it shares no code with the agent it emulates the service for.',
      severity: 'error',
      from: { path: EMULATOR },
      to: { path: '^src/', pathNot: `${EMULATOR}|^src/(contract|http)/|^src/errors[.]ts$` },
    },
    upward(
      'testing-stands-on-the-emulator',
      'The testing kit stands on the emulator, runtime/ and the layers below; the agent and the capabilities are what a bot runs against it.',
      TESTING,
      [CAPABILITY, COMPOSITION, ENTRY].join('|'),
    ),
    {
      name: 'only-entries-import-testing',
      comment: 'Only `listing-agent/testing` and the CLI (`emulator --discord`) load the testing kit: the main entry never does.',
      severity: 'error',
      from: { path: '^src/', pathNot: `${TESTING}|^src/public/testing[.]ts$|^src/cli/commands/emulator-discord[.]ts$` },
      to: { path: TESTING },
    },
    {
      name: 'only-cli-touches-process',
      comment: 'Only src/cli/ touches process (argv, env, signals, exit codes); the library never does.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^(node:)?process$' },
    },
    {
      name: 'src-imports-no-tests',
      comment: 'The package does not ship test/, bench/ or scripts/.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench|scripts)/' },
    },
  ],
  options: {
    // src/, and the one core module a rule names (only-cli-touches-process).
    includeOnly: '^src/|^(node:)?process$',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.build.json' },
    reporterOptions: {
      dot: { collapsePattern: '^src/[^/]+' },
    },
  },
};
