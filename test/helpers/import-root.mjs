/**
 * A bot's process that imports the built package's root (dist/index.js) and makes nothing, for
 * test/integration/cli/idle-modules.test.ts: prints `imported`, then waits (an interval stands in
 * for the bot's gateway connection); run under test/helpers/module-list.mjs, SIGUSR2 then lists its
 * modules.
 */
const { createListingAgent } = await import('../../dist/index.js');
console.log(typeof createListingAgent === 'function' ? 'imported' : 'no createListingAgent');
setInterval(() => undefined, 60_000);
