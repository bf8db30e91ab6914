import { request } from 'undici';
import type { ListenAddress } from '../../http/listen-error.js';
import { errorMessage } from '../../errors.js';

/** Where to reach a server that listens on `listen` from this machine (a wildcard host is reached on loopback). */
export function localUrl(listen: ListenAddress, path: string): string {
  const host = listen.host === '0.0.0.0' || listen.host === '' ? '127.0.0.1' : listen.host === '::' ? '::1' : listen.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${listen.port}${path}`;
}

/** What a local server answered, or why it did not. */
export type LocalAnswer =
  | { kind: 'answer'; status: number; body: unknown; ms: number }
  /** Nothing listens there. */
  | { kind: 'refused' }
  | { kind: 'error'; reason: string; timedOut: boolean };

/** Options of {@link askLocal}. */
export interface AskLocalOptions {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** One HTTP request, no redirects followed; never rejects. */
export async function askLocal(url: string, options: AskLocalOptions): Promise<LocalAnswer> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  const started = performance.now();
  try {
    const res = await request(url, {
      method: options.method ?? 'GET',
      headers: options.headers ?? {},
      ...(options.body === undefined ? {} : { body: options.body }),
      signal,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    const text = await res.body.text();
    let body: unknown = text;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = text.slice(0, 200);
    }
    return { kind: 'answer', status: res.statusCode, body, ms: Math.round(performance.now() - started) };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? ((error as Error).cause as NodeJS.ErrnoException | undefined)?.code;
    if (code === 'ECONNREFUSED') return { kind: 'refused' };
    const timedOut = timeout.aborted || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT';
    const reason = timedOut
      ? `no answer within ${options.timeoutMs} ms`
      : `${code ? `${code}: ` : ''}${errorMessage(error)}`;
    return { kind: 'error', reason, timedOut };
  }
}
