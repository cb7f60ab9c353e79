// Reading a fetch call's arguments without changing them: the headers it will send, its URL and the model
// in its JSON body. Headers are read from whichever form they come in (a Headers object, pairs, a plain
// object, or the Request itself), without building a Headers object: that would throw on a value fetch
// itself would refuse, and the guard must see such a value to say what is wrong with it.

/** What fetch takes as its first argument. */
export type FetchInput = string | URL | Request;

/** The fetch function the Anthropic SDK (and most HTTP clients) accept. */
export type Fetch = (input: FetchInput, init?: RequestInit) => Promise<Response>;

/** The headers fetch will send: init.headers when given (they replace a Request's), else the Request's. */
function effectiveHeaders(input: FetchInput, init: RequestInit | undefined): RequestInit['headers'] | undefined {
  if (init?.headers !== undefined) return init.headers;
  return input instanceof Request ? input.headers : undefined;
}

/** Name/value pairs of any header form, as given (a JavaScript caller may put anything in them). */
function headerPairs(headers: NonNullable<RequestInit['headers']>): [unknown, unknown][] {
  if (headers instanceof Headers) return [...headers];
  if (Array.isArray(headers)) return headers.map((pair: unknown) => (Array.isArray(pair) ? [pair[0], pair[1]] : [undefined, undefined]));
  return Object.entries(headers);
}

/** One header's value (several values joined with ", ", as fetch sends them), or undefined when absent. */
export function readHeader(input: FetchInput, init: RequestInit | undefined, lowerName: string): string | undefined {
  const headers = effectiveHeaders(input, init);
  if (headers === undefined || headers === null) return undefined;
  if (headers instanceof Headers) return headers.get(lowerName) ?? undefined;
  const found: string[] = [];
  for (const [name, value] of headerPairs(headers)) if (typeof name === 'string' && name.toLowerCase() === lowerName && typeof value === 'string') found.push(value);
  return found.length === 0 ? undefined : found.join(', ');
}

/**
 * init with one header's value replaced and every other header as it was. The caller's objects are not
 * touched: a retrying SDK sends the same init again, and must find what it built.
 */
export function withHeader(input: FetchInput, init: RequestInit | undefined, lowerName: string, value: string): RequestInit {
  const source = effectiveHeaders(input, init);
  const headers = new Headers();
  if (source !== undefined && source !== null) {
    for (const [name, v] of headerPairs(source)) if (String(name).toLowerCase() !== lowerName) headers.append(String(name), String(v));
  }
  headers.set(lowerName, value);
  return { ...init, headers };
}

/** The URL the call goes to. */
export function urlOf(input: FetchInput): URL | undefined {
  try {
    return new URL(input instanceof Request ? input.url : input);
  } catch {
    return undefined;
  }
}

/** Bodies larger than this are not parsed for their model (the label is then empty). */
const MODEL_BODY_LIMIT = 1024 * 1024;

/** The JSON body's `model` ('' when none) and whether it asks for a stream (`"stream": true`), read in one parse. */
export function requestFieldsOf(init: RequestInit | undefined): { model: string; stream: boolean } {
  const none = { model: '', stream: false };
  const body = init?.body;
  let text: string | undefined;
  if (typeof body === 'string') text = body;
  else if (body instanceof Uint8Array) text = body.byteLength <= MODEL_BODY_LIMIT ? Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8') : undefined;
  if (text === undefined || text.length > MODEL_BODY_LIMIT) return none;
  try {
    const body = JSON.parse(text) as { model?: unknown; stream?: unknown } | null;
    return { model: typeof body?.model === 'string' ? body.model : '', stream: body?.stream === true };
  } catch {
    return none;
  }
}

/**
 * The route label: the URL path with id-like segments (msgbatch_01…, file_011…, long digit runs) as
 * `{id}`, so per-object calls share one bounded series.
 */
export function routeOf(url: URL | undefined): string {
  if (url === undefined) return '';
  return url.pathname
    .split('/')
    .map((segment) => (/^[a-z]+_[A-Za-z0-9]{8,}$/.test(segment) || /\d{6,}/.test(segment) ? '{id}' : segment))
    .join('/');
}
