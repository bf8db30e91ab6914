import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The package version, for the `User-Agent`. */
export const CLIENT_VERSION: string = (require('../../package.json') as { version: string }).version;
