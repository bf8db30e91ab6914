/** A response as tests look at it: status, headers, and the body parsed when it is JSON. */
export interface TestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** Options of {@link call}. */
export interface CallOptions {
  method?: string;
  /** Sent as `Authorization: Bearer <token>`. */
  bearer?: string;
  /** Sent as the raw `Authorization` header (v0). */
  authorization?: string;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as `application/x-www-form-urlencoded`. */
  form?: Record<string, string>;
  /** Sent as is. */
  body?: string | Buffer;
  headers?: Record<string, string>;
  redirect?: 'manual' | 'follow' | 'error';
}

/** One HTTP request over a real socket; never throws on a status. */
export async function call<T = any>(url: string, options: CallOptions = {}): Promise<TestResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.bearer !== undefined) headers.authorization = `Bearer ${options.bearer}`;
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  let body: string | Buffer | undefined = options.body;
  if (options.json !== undefined) {
    body = JSON.stringify(options.json);
    headers['content-type'] ??= 'application/json';
  }
  if (options.form !== undefined) {
    body = new URLSearchParams(options.form).toString();
    headers['content-type'] ??= 'application/x-www-form-urlencoded';
  }
  const response = await fetch(url, {
    method: options.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    body,
    redirect: options.redirect ?? 'manual',
  });
  const text = await response.text();
  let parsed: unknown = text;
  if (text !== '' && (response.headers.get('content-type') ?? '').includes('json')) parsed = JSON.parse(text);
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}
