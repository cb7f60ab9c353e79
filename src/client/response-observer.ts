// What a response's body says about the call, read as the caller reads it: the body is wrapped in a stream
// that hands each chunk on unchanged, the moment it is asked for (no read-ahead: nothing is pulled before
// the caller pulls), and looks at the bytes on the way. A stream (text/event-stream) is parsed as SSE,
// line by line, keeping at most one short line: the time of the first `content_block_delta` (the first
// text), the usage of `message_start` and of the last `message_delta`, the served model. A JSON body is
// kept (as copies: the caller owns the chunks it gets and may reuse them) up to a cap and parsed once it ends; past the
// cap only its first and last bytes are kept, and `model` and `usage` are read from them.

/** Token usage as the Messages API reports it (input excludes the cache reads and writes). */
export interface TokenUsage {
  input: number;
  output: number;
  cacheRead: number;
  cacheCreation: number;
}

/** How the observation ended: the body's end, the caller cancelled, the body failed, or it was not read through in time. */
export type BodyEnd = 'end' | 'cancel' | 'error' | 'unfinished';

export interface BodyFacts {
  /** The body is server-sent events. */
  stream: boolean;
  /** ms from the call's start to the first content_block_delta of a stream. */
  firstEventMs: number | undefined;
  /** ms from the call's start to the last body byte (or to the cancel, the error, the give-up). */
  durationMs: number;
  tokens: TokenUsage | undefined;
  /** The body's `model`: the model that served the call. */
  responseModel: string | undefined;
  /** An error body's `error.type` (the response's, or a stream's `error` event). */
  errorType: string | undefined;
  errorMessage: string | undefined;
  end: BodyEnd;
}

export interface ObserveOptions {
  /** performance.now() when the call started. */
  startedAt: number;
  /** JSON bodies up to this many bytes are parsed whole; longer ones are read from their first and last bytes. */
  maxJsonBytes: number;
  /** Called once, when the body is done (or given up on); must not throw. */
  done(facts: BodyFacts): void;
}

/** An SSE line longer than this is skipped (a text delta can be long; the lines read here are short). */
const MAX_SSE_LINE = 64 * 1024;
/** What a long JSON body keeps of its start (for `model`) and end (for `usage`). */
const JSON_EDGE = 8 * 1024;
/** Enough of a line to tell `event:` and `data:` lines apart. */
const LINE_PREFIX = 6;
const EVENT = new TextEncoder().encode('event:');
const DATA = new TextEncoder().encode('data:');
const LF = 0x0a;
const CR = 0x0d;

/**
 * The response to give the caller: the same one when there is no body to observe (facts reported at
 * once), else an equal Response whose body passes through `observe`'s reader. Only a WHATWG Response
 * with a ReadableStream body is wrapped; another fetch's response is given back as it is.
 */
export function observeResponse(response: Response, opts: ObserveOptions): { response: Response; observation: Observation | undefined } {
  const body = response.body;
  if (!(response instanceof Response) || !(body instanceof ReadableStream) || response.bodyUsed) {
    opts.done(emptyFacts(performance.now() - opts.startedAt));
    return { response, observation: undefined };
  }
  const contentType = response.headers.get('content-type') ?? '';
  const observation = new Observation(/^text\/event-stream\b/i.test(contentType) ? new SseScanner() : new JsonScanner(opts.maxJsonBytes), opts);
  const reader = body.getReader();
  const wrapped = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (err) {
          observation.finish('error');
          controller.error(err);
          return;
        }
        if (chunk.done) {
          observation.finish('end');
          controller.close();
          return;
        }
        observation.chunk(chunk.value);
        controller.enqueue(chunk.value);
      },
      cancel(reason) {
        observation.finish('cancel');
        return reader.cancel(reason);
      },
    },
    // 0: a chunk is read from the network only when the caller asks for one.
    { highWaterMark: 0 },
  );
  const out = new Response(wrapped, { status: response.status, statusText: response.statusText, headers: response.headers });
  // What the constructor cannot set, as the original has it.
  Object.defineProperties(out, {
    url: { value: response.url },
    redirected: { value: response.redirected },
    type: { value: response.type },
  });
  return { response: out, observation };
}

function emptyFacts(durationMs: number): BodyFacts {
  return { stream: false, firstEventMs: undefined, durationMs, tokens: undefined, responseModel: undefined, errorType: undefined, errorMessage: undefined, end: 'end' };
}

interface Scanner {
  readonly stream: boolean;
  /** Reads a chunk; returns true when it held the first text event. */
  chunk(bytes: Uint8Array): boolean;
  /** What was found, at the end. */
  facts(into: BodyFacts): void;
}

/** One call's observation: the scanner, the first-event time, and the single report. */
export class Observation {
  private firstEventMs: number | undefined;
  private finished = false;
  private failed = false;

  constructor(
    private readonly scanner: Scanner,
    private readonly opts: ObserveOptions,
  ) {}

  get pending(): boolean {
    return !this.finished;
  }

  chunk(bytes: Uint8Array): void {
    if (this.finished || this.failed) return;
    try {
      if (this.scanner.chunk(bytes) && this.firstEventMs === undefined) this.firstEventMs = performance.now() - this.opts.startedAt;
    } catch {
      // A bug of ours must never touch the caller's bytes: stop looking, the chunk still goes on.
      this.failed = true;
    }
  }

  /** Reports the facts once; later calls (a cancel after the end, a give-up after either) do nothing. */
  finish(end: BodyEnd): void {
    if (this.finished) return;
    this.finished = true;
    const facts = emptyFacts(performance.now() - this.opts.startedAt);
    facts.end = end;
    facts.stream = this.scanner.stream;
    facts.firstEventMs = this.firstEventMs;
    if (!this.failed) {
      try {
        this.scanner.facts(facts);
      } catch {
        // as in chunk(): the call is recorded with what is known
      }
    }
    this.opts.done(facts);
  }
}

/** Incremental SSE: `event:` and `data:` lines, an event dispatched at its blank line. */
class SseScanner implements Scanner {
  readonly stream = true;
  private parts: Uint8Array[] = [];
  private lineBytes = 0;
  /** The current line's first LINE_PREFIX bytes. */
  private readonly head = new Uint8Array(LINE_PREFIX);
  /** Whether the current line is kept: undefined until its first LINE_PREFIX bytes are in. */
  private keep: boolean | undefined;
  /** The current line outgrew MAX_SSE_LINE: skip to its end. */
  private skipping = false;
  /** The stream has used CR as a line end: look for it too from now on. */
  private hasCr = false;
  /** The previous chunk ended in CR: an LF starting this one ends nothing more. */
  private afterCr = false;
  private event = '';
  private data = '';
  private sawText = false;
  private usage: Partial<TokenUsage> = {};
  private model: string | undefined;
  private errorType: string | undefined;
  private errorMessage: string | undefined;
  private readonly decoder = new TextDecoder();

  chunk(bytes: Uint8Array): boolean {
    const before = this.sawText;
    let from = 0;
    if (this.afterCr && bytes[0] === LF) from = 1; // the LF of a CRLF split across chunks
    // Line ends found natively (indexOf), not byte by byte: most of a stream is text the scanner skips.
    let lf = bytes.indexOf(LF, from);
    let cr = this.hasCr || bytes.includes(CR) ? ((this.hasCr = true), bytes.indexOf(CR, from)) : -1;
    while (lf >= 0 || cr >= 0) {
      const at = cr < 0 || (lf >= 0 && lf < cr) ? lf : cr;
      this.take(bytes, from, at);
      this.line();
      from = at + (bytes[at] === CR && bytes[at + 1] === LF ? 2 : 1);
      if (lf >= 0 && lf < from) lf = bytes.indexOf(LF, from);
      if (cr >= 0 && cr < from) cr = bytes.indexOf(CR, from);
    }
    this.afterCr = bytes.length > 0 && bytes[bytes.length - 1] === CR;
    this.take(bytes, from, bytes.length);
    return !before && this.sawText;
  }

  /**
   * Adds bytes of the current line. Only its first LINE_PREFIX bytes are looked at (in place, no copy)
   * until they show the line is one read here (`event:`, or `data:` of a wanted event); the rest of any
   * other line is only counted.
   */
  private take(bytes: Uint8Array, from: number, to: number): void {
    if (to <= from || this.skipping) return;
    if (this.keep === false) return;
    const n = to - from;
    if (this.lineBytes + n > MAX_SSE_LINE) {
      this.skipping = true;
      this.parts = [];
      return;
    }
    let at = from;
    while (this.keep === undefined && at < to) {
      this.head[this.lineBytes++] = bytes[at++] as number;
      if (this.lineBytes === LINE_PREFIX) this.keep = this.headIs(EVENT) || (this.headIs(DATA) && this.wantsData());
      else if (this.lineBytes === DATA.length && this.headIs(DATA) && !this.wantsData()) this.keep = false;
    }
    if (this.keep === false) return;
    this.lineBytes += to - at;
    // A copy: the caller may reuse or transfer its chunk once it has it.
    if (this.keep === true && at < to) this.parts.push(bytes.slice(at, to));
  }

  private headIs(word: Uint8Array): boolean {
    for (let i = 0; i < word.length; i++) if (this.head[i] !== word[i]) return false;
    return true;
  }

  private line(): void {
    const skipped = this.skipping || this.keep === false;
    const length = this.lineBytes;
    const parts = this.parts;
    this.parts = [];
    this.lineBytes = 0;
    this.keep = undefined;
    this.skipping = false;
    // A line not kept is data of an event not read here (a text delta), or a field this scanner ignores.
    if (skipped) return;
    if (length === 0) return this.dispatch();
    const head = this.head.subarray(0, Math.min(length, LINE_PREFIX));
    const text = this.decoder.decode(parts.length === 0 ? head : concat([head, ...parts]));
    if (text.startsWith('event:')) this.event = text.slice(text.charCodeAt(6) === 0x20 ? 7 : 6);
    else if (text.startsWith('data:') && this.wantsData()) this.data += (this.data === '' ? '' : '\n') + text.slice(text.charCodeAt(5) === 0x20 ? 6 : 5);
  }

  /** Only these events' data is read (and their lines are short); text deltas are only noticed. */
  private wantsData(): boolean {
    return this.event === 'message_start' || this.event === 'message_delta' || this.event === 'error';
  }

  private dispatch(): void {
    const event = this.event;
    const data = this.data;
    this.event = '';
    this.data = '';
    if (event === 'content_block_delta') {
      this.sawText = true;
      return;
    }
    if (data === '') return;
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch {
      return;
    }
    if (!isObject(value)) return;
    if (event === 'message_start' && isObject(value.message)) {
      if (typeof value.message.model === 'string') this.model = value.message.model;
      readUsage(value.message.usage, this.usage);
    } else if (event === 'message_delta') {
      // Cumulative: the last one holds the final output_tokens (and, from newer APIs, the input counts too).
      readUsage(value.usage, this.usage);
    } else if (event === 'error' && isObject(value.error)) {
      if (typeof value.error.type === 'string') this.errorType = value.error.type;
      if (typeof value.error.message === 'string') this.errorMessage = value.error.message;
    }
  }

  facts(into: BodyFacts): void {
    into.tokens = completeUsage(this.usage);
    into.responseModel = this.model;
    into.errorType = this.errorType;
    into.errorMessage = this.errorMessage;
  }
}

/** A JSON body: whole up to `max` bytes, else its first and last JSON_EDGE bytes. */
class JsonScanner implements Scanner {
  readonly stream = false;
  private chunks: Uint8Array[] = [];
  private bytes = 0;
  private head: Uint8Array | undefined;
  private tail: Uint8Array[] = [];
  private tailBytes = 0;

  constructor(private readonly max: number) {}

  chunk(bytes: Uint8Array): boolean {
    this.bytes += bytes.length;
    if (this.head === undefined && this.bytes <= this.max) {
      this.chunks.push(bytes.slice());
      return false;
    }
    if (this.head === undefined) {
      // Over the cap: keep the start, forget the middle, keep a rolling end.
      const all = concat([...this.chunks, bytes]);
      this.head = all.slice(0, JSON_EDGE);
      this.chunks = [];
      this.tail = [all.slice(Math.max(0, all.length - JSON_EDGE))];
      this.tailBytes = this.tail[0]?.length ?? 0;
      return false;
    }
    this.tail.push(bytes.slice(Math.max(0, bytes.length - JSON_EDGE)));
    this.tailBytes += Math.min(bytes.length, JSON_EDGE);
    while (this.tail.length > 1 && this.tailBytes - (this.tail[0]?.length ?? 0) >= JSON_EDGE) this.tailBytes -= this.tail.shift()?.length ?? 0;
    return false;
  }

  facts(into: BodyFacts): void {
    if (this.head === undefined) {
      let value: unknown;
      try {
        value = JSON.parse(new TextDecoder().decode(concat(this.chunks)));
      } catch {
        return;
      }
      this.chunks = [];
      if (!isObject(value)) return;
      if (typeof value.model === 'string') into.responseModel = value.model;
      const usage: Partial<TokenUsage> = {};
      readUsage(value.usage, usage);
      into.tokens = completeUsage(usage);
      if (isObject(value.error)) {
        if (typeof value.error.type === 'string') into.errorType = value.error.type;
        if (typeof value.error.message === 'string') into.errorMessage = value.error.message;
      }
      return;
    }
    const head = new TextDecoder().decode(this.head);
    const tail = new TextDecoder().decode(concat(this.tail));
    into.responseModel = /"model"\s*:\s*"([^"\\]{1,200})"/.exec(head)?.[1];
    // `usage` is the last member of a Messages response; its object holds numbers (and null) only.
    const usageText = /"usage"\s*:\s*(\{[^{}]*\})\s*\}\s*$/.exec(tail)?.[1];
    if (usageText !== undefined) {
      try {
        const usage: Partial<TokenUsage> = {};
        readUsage(JSON.parse(usageText), usage);
        into.tokens = completeUsage(usage);
      } catch {
        // not the shape looked for: no tokens
      }
    }
  }
}

const USAGE_FIELDS: readonly [string, keyof TokenUsage][] = [
  ['input_tokens', 'input'],
  ['output_tokens', 'output'],
  ['cache_read_input_tokens', 'cacheRead'],
  ['cache_creation_input_tokens', 'cacheCreation'],
];

function readUsage(v: unknown, into: Partial<TokenUsage>): void {
  if (!isObject(v)) return;
  for (const [wire, field] of USAGE_FIELDS) {
    const n = v[wire];
    if (typeof n === 'number' && Number.isFinite(n) && n >= 0) into[field] = n;
  }
}

/** Usage with both input and output known (the cache counts 0 when not reported), else none. */
function completeUsage(u: Partial<TokenUsage>): TokenUsage | undefined {
  if (u.input === undefined || u.output === undefined) return undefined;
  return { input: u.input, output: u.output, cacheRead: u.cacheRead ?? 0, cacheCreation: u.cacheCreation ?? 0 };
}

function isObject(v: unknown): v is Record<string, unknown> & { message?: unknown; error?: unknown; usage?: unknown; model?: unknown } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1) return parts[0] as Uint8Array;
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/**
 * The observations of one instrumented fetch: each is reported when its body is done, or after `maxWaitMs`
 * (a body the caller never reads through), or at settle() (close()), with what is known by then.
 */
export class ResponseObservers {
  private readonly pending = new Set<Observation>();

  constructor(
    private readonly maxJsonBytes: number,
    private readonly maxWaitMs: number,
  ) {}

  get size(): number {
    return this.pending.size;
  }

  observe(response: Response, startedAt: number, done: (facts: BodyFacts) => void): Response {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let observation: Observation | undefined;
    const result = observeResponse(response, {
      startedAt,
      maxJsonBytes: this.maxJsonBytes,
      done: (facts) => {
        if (timer !== undefined) clearTimeout(timer);
        if (observation !== undefined) this.pending.delete(observation);
        done(facts);
      },
    });
    observation = result.observation;
    if (observation !== undefined && observation.pending) {
      this.pending.add(observation);
      const o = observation;
      timer = setTimeout(() => o.finish('unfinished'), this.maxWaitMs);
      // A body nobody reads must not keep the process alive.
      timer.unref?.();
    }
    return result.response;
  }

  /** Reports every observation still open, as unfinished. */
  settle(): void {
    for (const o of [...this.pending]) o.finish('unfinished');
  }
}
