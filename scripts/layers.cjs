/**
 * The layers of src/, from the top down: the one table that `.dependency-cruiser.cjs` turns into
 * rules and `npm run docs` draws in docs/architecture.md. Each layer imports only from the layers
 * below it; `path` matches the files of the layer (paths from the repository root).
 */
module.exports.LAYERS = [
  { name: 'entry', path: '^src/(cli|demo|public)/|^src/index[.]ts$', says: 'the package entries and the programs: the only code that touches process' },
  { name: 'composition', path: '^src/(agent|doctor)/', says: 'wires the capabilities from a validated config; the doctor checks what the agent would run' },
  { name: 'capability', path: '^src/(stats|commands|votes|webhooks|leader|health|status)/', says: 'one folder per thing the agent does; none imports another' },
  { name: 'runtime', path: '^src/runtime/', says: 'what every capability shares: the capability contract, readiness, metrics, schedules, leadership, the vote pipeline as the roads see it' },
  { name: 'infrastructure', path: '^src/(api|store|redis|http|discord|config|log|fs)/', says: 'the service client, state, sockets, Discord, the config schema, logs' },
  { name: 'contract', path: '^src/contract/|^src/errors[.]ts$', says: 'pure rules of the service (limits, bodies, signatures, the vote and its key), the error family, and the clamp of timer delays that every layer uses' },
];

/** Beside the layers: the emulator, a sibling product on contract/ and http/ only. */
module.exports.EMULATOR = { name: 'emulator', path: '^src/emulator/', says: 'a faithful local copy of the service, on contract/ and http/ only' };

/**
 * Beside them too: the testing kit for bot owners (`listing-agent/testing`), a fake Discord beside
 * the emulator. It stands on the emulator and the layers below the capabilities; only its package
 * entry and the CLI's `emulator --discord` import it, so the main entry never loads it.
 */
module.exports.TESTING = {
  name: 'testing',
  path: '^src/testing/',
  says: 'the testing kit for bot owners: a fake Discord beside the emulator, on emulator/, runtime/ and below',
};
