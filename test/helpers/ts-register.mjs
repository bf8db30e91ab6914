// `node --import ./test/helpers/ts-register.mjs script.ts`: runs TypeScript sources in a child
// process without a build step (see ts-hooks.mjs).
import { register } from 'node:module';

register('./ts-hooks.mjs', import.meta.url);
