/**
 * The JSON error-position finder (src/config/json-position.ts) next to jsonc-parser and
 * json-source-map (docs/decisions/less-by-hand.md): where each points for the mistakes people make
 * in a config file, and how fast each finds the mistake in a config-sized file and in a 1 MiB
 * commands file. Only invalid texts reach the finder (valid ones are JSON.parse's), so speed
 * matters little; what each says matters more.
 *
 * Run after `npm run build`, with the candidates installed without saving them:
 *   npm i --no-save jsonc-parser json-source-map && node bench/less-by-hand/json-position.mjs
 */
import { createRequire } from 'node:module';
import { loadavg } from 'node:os';

const require = createRequire(import.meta.url);
const { visit, printParseErrorCode } = require('jsonc-parser');
const jsonSourceMap = require('json-source-map');
const { locateJsonError } = await import('../../dist/config/json-position.js');

/** line:column (1-based) of an offset. */
function position(text, offset) {
  const before = text.slice(0, offset);
  return `${before.split('\n').length}:${offset - (before.lastIndexOf('\n') + 1) + 1}`;
}

const FINDERS = {
  ours: (text) => {
    const found = locateJsonError(text);
    return found && `${found.line}:${found.column} ${found.reason}`;
  },
  'jsonc-parser': (text) => {
    let found;
    visit(text, { onError: (code, offset) => (found ??= `${position(text, offset)} ${printParseErrorCode(code)}`) }, { disallowComments: true, allowTrailingComma: false });
    return found;
  },
  'json-source-map': (text) => {
    try {
      jsonSourceMap.parse(text);
      return undefined;
    } catch (error) {
      const at = /position (\d+)/.exec(error.message);
      return `${at ? position(text, Number(at[1])) : 'no position'} "${error.message}"`;
    }
  },
};

const guard = (finder) => (text) => {
  try {
    return finder(text) ?? 'accepted';
  } catch (error) {
    return `threw ${error.constructor.name}: ${error.message}`;
  }
};

const MISTAKES = [
  ['trailing comma', '{\n  "service": { "token": "t" },\n}'],
  ['missing comma', '{\n  "service": { "token": "t" }\n  "stats": {}\n}'],
  ['unquoted value (a token pasted bare)', '{\n  "service": {\n    "token": SECRET.TOKEN.X\n  }\n}'],
  ['single quotes', "{ 'service': {} }"],
  ['a line break inside a string', '{ "token": "abc\ndef" }'],
  ['a Windows path (unknown escape)', '{ "state": { "directory": "C:\\data\\agent" } }'],
  ['a comment', '{\n  // the service\n  "service": {}\n}'],
  ['unclosed object', '{\n  "service": {\n'],
  ['nested 50 000 levels', '['.repeat(50_000)],
];

console.log(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}, node ${process.version}\n`);
console.log(`| mistake | ${Object.keys(FINDERS).join(' | ')} |`);
console.log(`| --- | ${Object.keys(FINDERS).map(() => '---').join(' | ')} |`);
for (const [name, text] of MISTAKES) {
  console.log(`| ${name} | ${Object.values(FINDERS).map((finder) => guard(finder)(text).replace(/\|/g, '\\|').replace(/\n/g, '\\n').slice(0, 90)).join(' | ')} |`);
}

/** Calls per second of `finder` on `text` over about `ms`. */
function rate(finder, text, ms = 1_000) {
  let calls = 0;
  const started = performance.now();
  while (performance.now() - started < ms) {
    finder(text);
    calls += 1;
  }
  return calls / ((performance.now() - started) / 1000);
}

const config = `{\n  "service": { "token": "${'t'.repeat(200)}" },\n  "votes": { "hooks": [${Array.from({ length: 20 }, (_, i) => `{ "name": "h${i}", "url": "https://example.com/${i}" }`).join(', ')}] },\n  "stats": { "enabled": true },\n}`;
const commands = `[${Array.from({ length: 2_000 }, (_, i) => JSON.stringify({ name: `cmd${i}`, description: 'd'.repeat(400), options: [{ type: 3, name: 'o', description: 'x' }] })).join(',\n')},]`;
console.log(`\n| finder | ${config.length} B config, trailing comma at the end: calls/s | ${(commands.length / 1024 / 1024).toFixed(1)} MiB commands file, trailing comma at the end: calls/s |`);
console.log('| --- | ---: | ---: |');
for (const [name, finder] of Object.entries(FINDERS)) {
  console.log(`| ${name} | ${Math.round(rate(finder, config))} | ${rate(finder, commands).toFixed(1)} |`);
}
