import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * The status page's static files, served from the package itself (no CDN, no network: the page
 * works on an air-gapped host): its own script and style (assets/status/ at the package root,
 * shipped in the npm package), and uPlot from the package's dependencies.
 */

/** One static file, read once. */
export interface StaticAsset {
  body: Buffer;
  contentType: string;
  /** A strong ETag of the body. */
  etag: string;
}

const requireFromHere = createRequire(import.meta.url);
/** src/status/ and dist/status/ are both two levels below the package root. */
const own = (name: string) => fileURLToPath(new URL(`../../assets/status/${name}`, import.meta.url));

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';

/** The files the page may ask for, by the name in its URL: nothing else is served. */
const FILES: Record<string, { path: () => string; contentType: string }> = {
  'status-page.js': { path: () => own('status-page.js'), contentType: JS },
  'status-page.css': { path: () => own('status-page.css'), contentType: CSS },
  'uPlot.iife.min.js': { path: () => requireFromHere.resolve('uplot/dist/uPlot.iife.min.js'), contentType: JS },
  'uPlot.min.css': { path: () => requireFromHere.resolve('uplot/dist/uPlot.min.css'), contentType: CSS },
};

const cache = new Map<string, Promise<StaticAsset>>();

/**
 * The asset called `name`, read from disk the first time; undefined for a name that is not one
 * of {@link ASSET_NAMES}. Rejects when the file is missing (a broken install).
 */
export function readAsset(name: string): Promise<StaticAsset> | undefined {
  const file = Object.hasOwn(FILES, name) ? FILES[name] : undefined;
  if (file === undefined) return undefined;
  let reading = cache.get(name);
  if (reading === undefined) {
    reading = (async () => {
      const body = await readFile(file.path());
      return { body, contentType: file.contentType, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
    })();
    // A failed read is tried again next time (the file may be restored).
    reading.catch(() => cache.delete(name));
    cache.set(name, reading);
  }
  return reading;
}
