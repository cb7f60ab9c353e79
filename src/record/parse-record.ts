// One JSON line → one GatewayRecord, or the reason it cannot be one. Field paths are compiled once, so the
// per-line work is JSON.parse plus a handful of property reads — or, from bytes, a scan that reads only
// those fields (scan-record.ts) and hands the same values to the same conversions.
import { parseApacheEscaped } from './apache-escapes.js';
import { onCalendar } from './calendar.js';
import { flatHeaderField, TOKEN_TYPES, type HeaderSource, type Mapping, type TokenType } from './presets.js';
import { parseGoDuration } from './go-duration.js';
import { copyOf, PackedBytes, RecordScanner, sameBytes, SCAN_DECLINED, SCAN_INVALID, SCAN_NOT_OBJECT, SCAN_READ, scannable, TEXT, type ScanLayout } from './scan-record.js';

export const PARSE_ERROR_REASONS = ['invalid_json', 'not_object', 'missing_latency', 'bad_latency', 'negative_latency', 'implausible_latency', 'bad_timestamp', 'too_long'] as const;
export type ParseErrorReason = (typeof PARSE_ERROR_REASONS)[number];

export interface GatewayRecord {
  /** Event time in epoch milliseconds; undefined when the line has none (arrival time is used). */
  timeMs: number | undefined;
  latencySeconds: number;
  status: number | undefined;
  model: string;
  route: string;
  cohort: string;
  /** Wanted response headers by lower-case name; a header the line lacks is absent. */
  responseHeaders: Record<string, string>;
  /** Wanted request headers, or undefined when the log carries no request headers at all. */
  requestHeaders: Record<string, string> | undefined;
  /** Token counts by type, when the mapping reads them and the line carries at least one (tokenCounts()). */
  tokens?: TokenCounts | undefined;
  /** The request's prompt hash, when the mapping reads one and the line carries one (promptHashOf()). */
  promptHash?: string | undefined;
}

/**
 * What a prompt hash is: 8 to 128 characters of hex, base64 or a `sha256:`-style prefix. Anything else (a
 * prompt mapped by mistake, a gateway's "-") is no hash: a hash is kept in memory and shown as a label
 * value, a prompt must never be (docs/contract.md §5).
 */
const PROMPT_HASH = /^[A-Za-z0-9_.:+/=-]{8,128}$/;

/** A prompt hash from the value at the mapping's path, or undefined; one rule for both parse paths (a one-item list reads as its item on both). */
export function promptHashOf(v: unknown): string | undefined {
  const one = Array.isArray(v) && v.length === 1 ? (v[0] as unknown) : v;
  return typeof one === 'string' && PROMPT_HASH.test(one) ? one : undefined;
}

export type TokenCounts = Partial<Record<TokenType, number>>;

export type ParseResult = { ok: true; record: GatewayRecord } | { ok: false; reason: ParseErrorReason };

type JsonObject = Record<string, unknown>;
type Getter = (obj: JsonObject) => unknown;

const UNIT_SECONDS = { s: 1, ms: 1e-3, us: 1e-6, ns: 1e-9 } as const;
const LIST_SEPARATOR = /\s*[,:]\s*/;
const NUMERIC = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:?\d{2})$/;
/** "2026-11-29T12:00:", the part of a canonical timestamp that changes once a minute. */
const MINUTE_PREFIX_LENGTH = 17;
/** The canonical form's lengths: "…:05Z" (20) to "…:05.123456789+08:00" (35). */
const CANONICAL_MIN_LENGTH = 20;
const CANONICAL_MAX_LENGTH = 35;
/** Fraction digits read on the fast path (Date.parse keeps the first three and drops the rest). */
const MAX_FRACTION_DIGITS = 9;
/** A zone the minute cache keys on: Z or ±HH:MM (validated by Date.parse when its minute is cached). */
const ZONE = /^(?:Z|[+-]\d{2}:\d{2})$/;
/**
 * What parseBytes says without a record, shared: no allocation for a line that is not one. Not frozen: a
 * frozen object has a map of its own, and the pipeline's per-line code would then see one more shape.
 */
const INVALID_JSON: ParseResult = { ok: false, reason: 'invalid_json' };
const NOT_OBJECT: ParseResult = { ok: false, reason: 'not_object' };
/** A line over input.maxLineBytes, as the pipeline counts it (shared like the two above). */
export const TOO_LONG: ParseResult = { ok: false, reason: 'too_long' };
/**
 * Caddy writes durations as float seconds by default and as integer nanoseconds with `duration_format nano`,
 * under the same key. A float-seconds value is a whole number only when the duration is a whole number of
 * seconds to the nanosecond (never, in practice), and a request shorter than a microsecond is not one a
 * proxy logs: so an integer of at least this many is nanoseconds, line by line, and no file can mix them up.
 */
const NANOS_FROM = 1000;

/** Seconds for a Go duration string ("1.234ms", "-2s", "1m2.5s", "350µs"), or undefined when it is not one. */
function goDurationSeconds(text: string): number | undefined {
  const negative = text.charCodeAt(0) === 0x2d;
  const body = negative || text.charCodeAt(0) === 0x2b ? text.slice(1) : text;
  // "0" alone is Go's zero duration, but a bare number is no duration string: it was read as a number already.
  if (body === '0' || body === '') return undefined;
  const ns = parseGoDuration(body);
  if (ns === undefined) return undefined;
  return negative && ns > 0 ? -ns * 1e-9 : ns * 1e-9;
}

/** Epoch numbers below this are seconds, above are milliseconds (1e11 s is the year 5138; 1e11 ms is 1973). */
const EPOCH_MS_THRESHOLD = 1e11;

function compilePath(path: string): Getter {
  const parts = path.split('.');
  if (parts.length === 1) return (obj) => obj[path];
  return (obj) => {
    let cur: unknown = obj;
    for (const part of parts) {
      if (cur === null || typeof cur !== 'object') return undefined;
      cur = (cur as JsonObject)[part];
    }
    return cur;
  };
}

function isObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export interface RecordParserOptions {
  mapping: Mapping;
  latencyList: 'last' | 'sum';
  /** A latency above this many seconds is no sample (`implausible_latency`): a unit misread, or a broken clock. */
  maxLatencySeconds: number;
  absentValues: readonly string[];
  /** Header names (any case) the signals need; only these are extracted. */
  responseHeaderNames: readonly string[];
  requestHeaderNames: readonly string[];
}

type HeaderReader = (obj: JsonObject) => Record<string, string> | undefined;
/** The minute of the last canonical timestamp seen ("2026-11-29T12:00:" in zone "+08:00"), and its epoch ms. */
interface MinuteCache {
  prefix: PackedBytes;
  zone: PackedBytes;
  ms: number;
}

export class RecordParser {
  private readonly time: Getter;
  /** The latency paths, tried in order. */
  private readonly latency: readonly Getter[];
  private readonly status: Getter;
  private readonly model: Getter;
  private readonly route: Getter;
  private readonly cohort: Getter;
  /** The token count paths, by TOKEN_TYPES' order; undefined when the mapping has none. */
  private readonly tokens: readonly (Getter | undefined)[] | undefined;
  private readonly promptHash: Getter | undefined;
  private readonly unit: number;
  /** An integer of NANOS_FROM or more is nanoseconds whatever the unit (Caddy's `duration_format nano`). */
  private readonly integerNanos: boolean;
  private readonly maxLatency: number;
  private readonly sumList: boolean;
  private readonly absentSet: ReadonlySet<string>;
  /** Longest absent spelling: longer values skip the set lookup (which would hash every timestamp and label). */
  private readonly absentMaxLength: number;
  private readonly readResponse: HeaderReader;
  private readonly readRequest: HeaderReader;
  /** Whether a parsed line carries a wanted header on each side (format detection only). */
  private readonly responseCarried: (obj: JsonObject) => string | undefined;
  private readonly requestCarried: (obj: JsonObject) => string | undefined;
  private minute: MinuteCache = { prefix: new PackedBytes(new Uint8Array(0)), zone: new PackedBytes(new Uint8Array(0)), ms: 0 };
  /** A string timestamp's characters as bytes, so both paths read timestamps with one function. */
  private readonly timeScratch = new Uint8Array(CANONICAL_MAX_LENGTH);
  private readonly timeScratchView = new DataView(this.timeScratch.buffer);
  /** The byte-level reader, when the mapping is one it can read exactly (plain top-level keys). */
  private readonly scanner: ScannedFields | undefined;
  /** Lines JSON.parse refuses are read again with Apache's \xhh escapes decoded (apache-escapes.ts). */
  readonly hexEscapes: boolean;

  constructor(opts: RecordParserOptions) {
    const m = opts.mapping;
    this.time = compilePath(m.time);
    this.latency = m.latency.map(compilePath);
    this.status = compilePath(m.status);
    this.model = compilePath(m.model);
    this.route = compilePath(m.route);
    this.cohort = compilePath(m.cohort);
    this.tokens = m.tokens === undefined ? undefined : TOKEN_TYPES.map((t) => (m.tokens?.[t] === undefined ? undefined : compilePath(m.tokens[t])));
    this.promptHash = m.promptHash === undefined ? undefined : compilePath(m.promptHash);
    this.unit = UNIT_SECONDS[m.latencyUnit];
    this.integerNanos = m.integerNanos === true;
    this.maxLatency = opts.maxLatencySeconds;
    this.sumList = opts.latencyList === 'sum';
    this.absentSet = new Set(opts.absentValues);
    this.absentMaxLength = Math.max(-1, ...opts.absentValues.map((v) => v.length));
    this.readResponse = this.headerReader(m.responseHeaders, opts.responseHeaderNames);
    this.readRequest = this.headerReader(m.requestHeaders, opts.requestHeaderNames);
    this.responseCarried = carries(m.responseHeaders, opts.responseHeaderNames);
    this.requestCarried = carries(m.requestHeaders, opts.requestHeaderNames);
    this.scanner = scannedFields(m, opts);
    this.hexEscapes = m.hexEscapes === true;
  }

  parse(line: string): ParseResult {
    let obj: unknown;
    try {
      obj = JSON.parse(line);
    } catch {
      obj = this.hexEscapes ? parseApacheEscaped(line) : undefined;
      if (obj === undefined) return INVALID_JSON;
    }
    return this.parseValue(obj);
  }

  /** A line already parsed as JSON (format detection parses each line once for every preset). */
  parseValue(obj: unknown): ParseResult {
    if (!isObject(obj)) return NOT_OBJECT;
    let latency: number | ParseErrorReason = 'missing_latency';
    for (let i = 0; i < this.latency.length && latency === 'missing_latency'; i++) latency = this.latencySeconds((this.latency[i] as Getter)(obj));
    return this.record(
      latency,
      this.timeMs(this.time(obj)),
      this.status(obj),
      this.model(obj),
      this.route(obj),
      this.cohort(obj),
      this.readResponse(obj),
      this.readRequest(obj),
      this.tokens === undefined ? undefined : tokenCounts(this.tokens, (get) => get?.(obj)),
      this.promptHash === undefined ? undefined : promptHashOf(this.promptHash(obj)),
    );
  }

  /**
   * The line in buf[start, end) (UTF-8, no terminator) read without decoding it, or undefined when it must
   * be decoded and given to parse(). Whatever it answers is what parse() gives for the decoded line; a line
   * that is not JSON (or not an object) is answered too, with a shared result and no string made.
   */
  parseBytes(buf: Buffer, start: number, end: number): ParseResult | undefined {
    const f = this.scanner;
    if (f === undefined) return undefined;
    const outcome = f.scanner.scan(buf, start, end);
    // Not JSON as written may be JSON once Apache's escapes are decoded: parse() decides (such lines are rare).
    if (outcome !== SCAN_READ) return outcome === SCAN_INVALID ? (this.hexEscapes ? undefined : INVALID_JSON) : outcome === SCAN_NOT_OBJECT ? NOT_OBJECT : undefined;
    let latency: number | ParseErrorReason = 'missing_latency';
    for (let i = 0; i < f.latency.length && latency === 'missing_latency'; i++) latency = this.scannedLatency(f, f.latency[i] as number);
    return this.record(
      latency,
      this.scannedTimeMs(f, buf),
      this.scannedStatus(f),
      this.scanned(f, f.model),
      this.scanned(f, f.route),
      this.scanned(f, f.cohort),
      this.scannedHeaders(f, f.response),
      this.scannedHeaders(f, f.request),
      f.tokens === undefined ? undefined : tokenCounts(f.tokens, (k) => (k === undefined ? undefined : f.scanner.values[k])),
      f.promptHash === undefined ? undefined : promptHashOf(this.scanned(f, f.promptHash)),
    );
  }

  private scanned(f: ScannedFields, k: number): unknown {
    const v = f.scanner.values[k];
    return v === TEXT ? f.scanner.text(k) : v;
  }

  /** latencySeconds() of a scanned value; a plain decimal string ("0.144") is read from its bytes. */
  private scannedLatency(f: ScannedFields, k: number): number | ParseErrorReason {
    const sc = f.scanner;
    if (sc.values[k] === TEXT && (sc.to[k] as number) - (sc.from[k] as number) > this.absentMaxLength) {
      const n = sc.decimal(k) * this.unit;
      // One comparison for the bound; NaN (not a plain decimal) fails it too and takes the slow path.
      if (n <= this.maxLatency) return n;
      if (n === n) return 'implausible_latency';
    }
    return this.latencySeconds(this.scanned(f, k));
  }

  /** statusCode() of the scanned status; "200" is read from its bytes. */
  private scannedStatus(f: ScannedFields): number | undefined {
    const sc = f.scanner;
    const k = f.status;
    if (sc.values[k] === TEXT && (sc.to[k] as number) - (sc.from[k] as number) <= 3) {
      const n = sc.digits(k);
      if (n >= 0) return n;
    }
    return this.statusCode(this.scanned(f, k));
  }

  /**
   * Whether the line carries at least one of the wanted headers where this mapping keeps them (any value,
   * absent ones too): with a latency, what makes a preset "read" a line when the format is detected.
   */
  carriesHeaders(obj: unknown): boolean {
    return this.headerEvidence(obj) !== undefined;
  }

  /** The first wanted header field the line has where this mapping keeps headers (any value), for detection's log. */
  headerEvidence(obj: unknown): string | undefined {
    return isObject(obj) ? (this.responseCarried(obj) ?? this.requestCarried(obj)) : undefined;
  }

  /**
   * Whether the line carries at least one wanted response header field where this mapping keeps them, any
   * value: what the header watch of a source's first records looks for (input-watch.ts). Request headers
   * alone do not count: every signal but the opt-in comes from the response's.
   */
  carriesResponseHeaders(obj: unknown): boolean {
    return isObject(obj) && this.responseCarried(obj) !== undefined;
  }

  /** carriesResponseHeaders() of the line in buf[start, end), scanned again when the scanner reads it (no string made). */
  carriesResponseHeadersBytes(buf: Buffer, start: number, end: number): boolean {
    const f = this.scanner;
    if (f !== undefined) {
      const outcome = f.scanner.scan(buf, start, end);
      if (outcome === SCAN_READ) {
        const side = f.response;
        // Without its header object, a side may still carry headers mapped to paths of their own.
        const slots = side.group !== undefined && !f.scanner.objectSeen[side.group] ? side.mappedSlots : side.slots;
        for (const k of slots) if (f.scanner.values[k] !== undefined) return true;
        return false;
      }
      // Not JSON as written may be JSON once Apache's escapes are decoded: the text path decides.
      if (outcome !== SCAN_DECLINED && !(outcome === SCAN_INVALID && this.hexEscapes)) return false;
    }
    return this.carriesResponseHeadersText(buf.toString('utf8', start, end));
  }

  /** carriesResponseHeaders() of a line of text. */
  carriesResponseHeadersText(line: string): boolean {
    let obj: unknown;
    try {
      obj = JSON.parse(line);
    } catch {
      obj = this.hexEscapes ? parseApacheEscaped(line) : undefined;
      if (obj === undefined) return false;
    }
    return this.carriesResponseHeaders(obj);
  }

  private record(
    latency: number | ParseErrorReason,
    timeMs: number | undefined | null,
    statusValue: unknown,
    modelValue: unknown,
    routeValue: unknown,
    cohortValue: unknown,
    responseHeaders: Record<string, string> | undefined,
    requestHeaders: Record<string, string> | undefined,
    tokens: TokenCounts | undefined,
    promptHash: string | undefined,
  ): ParseResult {
    if (typeof latency === 'string') return { ok: false, reason: latency };
    if (timeMs === null) return { ok: false, reason: 'bad_timestamp' };
    return {
      ok: true,
      record: {
        timeMs,
        latencySeconds: latency,
        status: this.statusCode(statusValue),
        model: this.label(modelValue),
        route: this.label(routeValue),
        cohort: this.label(cohortValue),
        responseHeaders: responseHeaders ?? {},
        requestHeaders,
        tokens,
        promptHash,
      },
    };
  }

  /**
   * One side's headers from a scan, as its headerReader would have read them from the parsed object. The
   * objects built for the last RECENT_HEADERS combinations of values are kept (frozen) and handed out again
   * while a line repeats one of them: building an object with these computed keys cost as much as scanning
   * the line, and a gateway log cycles through a handful of combinations (12 in the bench's default shape,
   * where a quarter of the lines differ from the line before).
   */
  private scannedHeaders(f: ScannedFields, side: ScannedHeaders): Readonly<Record<string, string>> | undefined {
    if (side.group !== undefined && !f.scanner.objectSeen[side.group]) return side.mapped ? this.mappedHeaders(f, side) : undefined;
    const { slots, values, recent } = side;
    for (let i = 0; i < slots.length; i++) values[i] = this.scanned(f, slots[i] as number);
    // The combination given last first: most lines repeat it.
    for (let r = 0; r < recent.length; r++) {
      const at = r === 0 ? side.recentLast : r === side.recentLast ? 0 : r;
      const entry = recent[at] as RecentHeaders;
      if (sameValues(entry.values, values)) {
        side.recentLast = at;
        return entry.headers;
      }
    }
    // A header object is carried when it is there; flat fields and mapped paths when any of them is (or
    // always, for a log that leaves out the key of a header not sent).
    let carried = side.group !== undefined || side.omitsMissing;
    const out: Record<string, string> = {};
    for (let i = 0; i < slots.length; i++) {
      const v = values[i];
      if (v === undefined) continue;
      carried = true;
      const value = this.headerValue(v);
      if (value !== undefined) out[side.names[i] as string] = value;
    }
    const headers = carried ? Object.freeze(out) : undefined;
    const at = side.recentNext;
    recent[at] = { values: values.slice(), headers };
    side.recentNext = (at + 1) % RECENT_HEADERS;
    side.recentLast = at;
    return headers;
  }

  /**
   * A side whose header object is not in the line: only the headers mapped to paths of their own
   * (input.headers) may be, and carry the side if one is. Not memoized: the values alone would not tell
   * this from an empty object.
   */
  private mappedHeaders(f: ScannedFields, side: ScannedHeaders): Readonly<Record<string, string>> | undefined {
    const from = side.names.length - side.mappedSlots.length;
    let carried = false;
    const out: Record<string, string> = {};
    for (let i = 0; i < side.mappedSlots.length; i++) {
      const v = this.scanned(f, side.mappedSlots[i] as number);
      if (v === undefined) continue;
      carried = true;
      const value = this.headerValue(v);
      if (value !== undefined) out[side.names[from + i] as string] = value;
    }
    return carried ? Object.freeze(out) : undefined;
  }

  private latencySeconds(v: unknown): number | ParseErrorReason {
    let value: number;
    if (typeof v === 'number') {
      value = v;
      if (this.integerNanos && value >= NANOS_FROM && Number.isInteger(value)) return this.bounded(value * 1e-9);
    } else if (typeof v === 'string') {
      if (this.isAbsent(v)) return 'missing_latency';
      const parsed = this.latencyText(v);
      if (typeof parsed === 'string') {
        // A duration with its unit in it (Caddy's `duration_format string`: "1.5ms", "350µs", "1m2s") is that long whatever the preset's unit.
        if (parsed !== 'bad_latency') return parsed;
        const seconds = goDurationSeconds(v);
        return seconds === undefined ? parsed : seconds < 0 ? 'negative_latency' : this.bounded(seconds);
      }
      value = parsed;
    } else if (v === undefined || v === null) {
      return 'missing_latency';
    } else {
      return 'bad_latency';
    }
    if (!Number.isFinite(value)) return 'bad_latency';
    if (value < 0) return 'negative_latency';
    return this.bounded(value * this.unit);
  }

  private bounded(seconds: number): number | ParseErrorReason {
    return seconds <= this.maxLatency ? seconds : 'implausible_latency';
  }

  /**
   * "0.183", or nginx's retry lists "0.050, 0.183" / "0.050 : 0.183". An upstream nginx never reached logs
   * "-": `last` then has no time for the attempt that answered (missing), `sum` counts it as 0.
   */
  private latencyText(text: string): number | ParseErrorReason {
    if (NUMERIC.test(text)) return Number(text);
    const parts = text.split(LIST_SEPARATOR);
    if (parts.length < 2 || !parts.every((p) => p === '-' || NUMERIC.test(p))) return 'bad_latency';
    if (!this.sumList) {
      const last = parts[parts.length - 1] as string;
      return last === '-' ? 'missing_latency' : Number(last);
    }
    return parts.reduce((sum, p) => (p === '-' ? sum : sum + Number(p)), 0);
  }

  /**
   * timeMs() of a scanned time field. A canonical timestamp is read from its bytes through the cached
   * minute, and epoch seconds written as a string (HAProxy's "1714564801.123") as a decimal, so the string
   * is only made when the minute changes.
   */
  private scannedTimeMs(f: ScannedFields, buf: Buffer): number | undefined | null {
    const sc = f.scanner;
    const k = f.time;
    if (sc.values[k] === TEXT && sc.plain(k)) {
      const s = sc.from[k] as number;
      const len = (sc.to[k] as number) - s;
      if (len > this.absentMaxLength) {
        const ms = this.canonicalMs(buf, sc.view, s, len);
        if (ms !== undefined) return ms;
        const n = sc.decimal(k);
        if (n === n) return n > 0 ? epochMs(n) : null;
      }
    }
    return this.timeMs(this.scanned(f, k));
  }

  /** undefined: no time in the line; null: a time that cannot be read. */
  private timeMs(v: unknown): number | undefined | null {
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'number') return Number.isFinite(v) && v > 0 ? epochMs(v) : null;
    if (typeof v !== 'string') return null;
    if (this.isAbsent(v)) return undefined;
    const fast = this.canonicalTimeMs(v);
    if (fast !== undefined) return fast;
    if (NUMERIC.test(v)) {
      const n = Number(v);
      // "1e400" is numeric text but Infinity: a time that would pin the last-record gauge at +Inf.
      return Number.isFinite(n) && n > 0 ? epochMs(n) : null;
    }
    return this.slowTimeMs(v);
  }

  /** canonicalMs() of a string (its characters as bytes); undefined when it is not ASCII or not that form. */
  private canonicalTimeMs(v: string): number | undefined {
    const len = v.length;
    if (len < CANONICAL_MIN_LENGTH || len > CANONICAL_MAX_LENGTH) return undefined;
    const scratch = this.timeScratch;
    for (let i = 0; i < len; i++) {
      const c = v.charCodeAt(i);
      if (c > 0x7f) return undefined;
      scratch[i] = c;
    }
    return this.canonicalMs(scratch, this.timeScratchView, 0, len);
  }

  /**
   * "2026-11-29T12:00:05.250Z", "…:05Z", "…:05+00:00" (nginx's `$time_iso8601`), "…:05.123456789Z"
   * (Traefik): the forms gateways write, in a[s, s + len), without the regex and Date.parse. The minute
   * ("2026-11-29T12:00:") and zone are read the slow way once and cached; then only the seconds and the
   * fraction are new, and Date.parse keeps a fraction's first three digits, so they are added to it.
   * undefined: not that form, or a minute that is not cached and cannot be, so the slow path decides.
   */
  private canonicalMs(a: Uint8Array, view: DataView<ArrayBufferLike>, s: number, len: number): number | undefined {
    if (len < CANONICAL_MIN_LENGTH || len > CANONICAL_MAX_LENGTH) return undefined;
    const s1 = (a[s + 17] as number) - 0x30;
    const s2 = (a[s + 18] as number) - 0x30;
    if (!(s1 >= 0 && s1 <= 5 && s2 >= 0 && s2 <= 9)) return undefined;
    const end = s + len;
    let i = s + 19;
    let ms = 0;
    if (a[i] === 0x2e /* . */) {
      let digits = 0;
      for (i++; i < end; i++) {
        const d = (a[i] as number) - 0x30;
        if (!(d >= 0 && d <= 9)) break;
        if (digits < 3) ms = ms * 10 + d;
        digits++;
      }
      if (digits === 0 || digits > MAX_FRACTION_DIGITS) return undefined;
      for (let p = digits; p < 3; p++) ms *= 10;
    }
    const zoneLength = end - i;
    if (zoneLength !== 1 && zoneLength !== 6) return undefined;
    const c = this.minute;
    if (c.zone.bytes.length !== zoneLength || !sameBytes(a, view, s, c.prefix) || !sameBytes(a, view, i, c.zone)) {
      if (!this.cacheMinute(copyOf(a, s, s + MINUTE_PREFIX_LENGTH), copyOf(a, i, end))) return undefined;
    }
    return this.minute.ms + (s1 * 10 + s2) * 1000 + ms;
  }

  /** Caches a minute and zone, read the slow way; false when it is not one the fast path may add seconds to. */
  private cacheMinute(prefixBytes: Uint8Array, zoneBytes: Uint8Array): boolean {
    const prefix = Buffer.from(prefixBytes).toString('latin1');
    const zone = Buffer.from(zoneBytes).toString('latin1');
    // Only a plain minute (hour 00–23, a T) in a plain zone: Date.parse reads "T24:00:00" but not "T24:00:30".
    const hour = Number(prefix.slice(11, 13));
    if (!(hour <= 23) || prefix.charCodeAt(10) !== 0x54 /* T */ || !ZONE.test(zone)) return false;
    const at = this.slowTimeMs(`${prefix}00${zone}`);
    if (typeof at !== 'number') return false;
    this.minute = { prefix: new PackedBytes(prefixBytes), zone: new PackedBytes(zoneBytes), ms: at };
    return true;
  }

  /**
   * RFC 3339 as the slow path reads it: regex, then Date.parse, then the calendar. Date.parse rolls an
   * impossible day over (2026-02-30 is read as March 2nd, T24:00 as the next day's midnight): a time the
   * line did not write, so it cannot be read. The fast path reaches here once a minute (cacheMinute).
   */
  private slowTimeMs(v: string): number | null {
    if (!RFC3339.test(v)) return null;
    const ms = Date.parse(v);
    return Number.isNaN(ms) || !onCalendar(v) ? null : ms;
  }

  private statusCode(v: unknown): number | undefined {
    const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,3}$/.test(v) ? Number(v) : NaN;
    return Number.isInteger(n) ? n : undefined;
  }

  /** A label value; a list (Caddy and Kong log header values as arrays) gives its first element. */
  private label(v: unknown): string {
    if (typeof v === 'string') return this.isAbsent(v) ? '' : v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    if (Array.isArray(v) && v.length > 0 && !Array.isArray(v[0])) return this.label(v[0]);
    return '';
  }

  private isAbsent(v: string): boolean {
    return v.length <= this.absentMaxLength && this.absentSet.has(v);
  }

  /**
   * A header's value, or undefined for no header. The gateway's "no value" spellings mean no header wherever
   * they sit: nginx logs a missing header as "" and HAProxy as "-", in flat fields and header objects alike.
   */
  private headerValue(v: unknown): string | undefined {
    if (typeof v === 'string') return this.isAbsent(v) ? undefined : v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    if (!Array.isArray(v)) return undefined;
    // Caddy and Kong log a header's values as an array; HTTP combines them with ", " (RFC 9110 §5.3).
    let text: string | undefined;
    for (const item of v) {
      const one = Array.isArray(item) ? undefined : this.headerValue(item);
      if (one !== undefined) text = text === undefined ? one : `${text}, ${one}`;
    }
    return text;
  }

  /** One side's headers: from its source, and those mapped to paths of their own (input.headers) from there. */
  private headerReader(where: HeaderSource, names: readonly string[]): HeaderReader {
    const { fromSource, mapped } = splitNames(where, names);
    const base = fromSource.size === 0 ? (): undefined => undefined : this.sourceReader(where, fromSource);
    if (mapped.length === 0) return base;
    const getters = mapped.map(([name, path]) => [name, compilePath(path)] as const);
    return (obj) => {
      const out = base(obj);
      let carried = out !== undefined;
      const headers = out ?? {};
      for (const [name, get] of getters) {
        const v = get(obj);
        if (v === undefined) continue;
        carried = true;
        const value = this.headerValue(v);
        if (value !== undefined) headers[name] = value;
      }
      return carried ? headers : undefined;
    };
  }

  private sourceReader(where: HeaderSource, wanted: ReadonlySet<string>): HeaderReader {
    if (where.path !== undefined) {
      const get = compilePath(where.path);
      const nameOf = headerNameCache(wanted);
      return (obj) => {
        const headers = get(obj);
        if (!isObject(headers)) return undefined;
        const out: Record<string, string> = {};
        for (const key in headers) {
          const name = nameOf(key);
          if (name === undefined) continue;
          const value = this.headerValue(headers[key]);
          if (value === undefined) continue;
          const prior = out[name];
          out[name] = prior === undefined ? value : `${prior}, ${value}`;
        }
        return out;
      };
    }
    // Flat fields: nginx `$upstream_http_x_foo`, Envoy `resp_x_foo`, Traefik `downstream_X-Foo`.
    const fields = [...wanted].map((name) => [name, flatHeaderField(where, name)] as const);
    return (obj) => {
      // A log that leaves out the key of a header not sent (Traefik) carries its headers on every line.
      let carried = where.omitsMissing === true;
      const out: Record<string, string> = {};
      for (const [name, field] of fields) {
        if (!(field in obj)) continue;
        carried = true;
        const value = this.headerValue(obj[field]);
        if (value !== undefined) out[name] = value;
      }
      return carried ? out : undefined;
    };
  }
}

/**
 * The wanted names (lower case) a side reads from its source, and those mapped to a path of their own
 * (input.headers), with the path. A mapping for a name nobody wants is no business of the parser.
 */
function splitNames(where: HeaderSource, names: readonly string[]): { fromSource: Set<string>; mapped: (readonly [string, string])[] } {
  const fromSource = new Set<string>();
  const mapped: (readonly [string, string])[] = [];
  for (const name of new Set(names.map((n) => n.toLowerCase()))) {
    const path = where.fields?.[name];
    if (path === undefined) fromSource.add(name);
    else mapped.push([name, path]);
  }
  return { fromSource, mapped };
}

/** The first wanted header field a line has at `where` (its field, path.name, or a mapped path), or undefined. */
function carries(where: HeaderSource, names: readonly string[]): (obj: JsonObject) => string | undefined {
  const { fromSource, mapped } = splitNames(where, names);
  const getters = mapped.map(([, path]) => [path, compilePath(path)] as const);
  const inSource = fromSource.size === 0 ? (): undefined => undefined : sourceCarries(where, [...fromSource]);
  if (getters.length === 0) return inSource;
  return (obj) => inSource(obj) ?? getters.find(([, get]) => get(obj) !== undefined)?.[0];
}

function sourceCarries(where: HeaderSource, wanted: readonly string[]): (obj: JsonObject) => string | undefined {
  if (where.path === undefined) {
    const fields = wanted.map((n) => flatHeaderField(where, n));
    return (obj) => fields.find((f) => f in obj);
  }
  const path = where.path;
  const get = compilePath(path);
  return (obj) => {
    const headers = get(obj);
    if (!isObject(headers)) return undefined;
    for (const key in headers) if (wanted.includes(key.toLowerCase())) return `${path}.${key}`;
    return undefined;
  };
}

/** Bounds the header-name cache against logs with endless distinct header names. */
const HEADER_NAME_CACHE_LIMIT = 1024;

/**
 * Raw header key → the wanted lower-case name it is, or undefined. Gateways repeat the same few keys and
 * JSON.parse hands out the same (internalized) key strings, so a Map hit replaces toLowerCase() plus a
 * set lookup per header per line.
 */
function headerNameCache(wanted: ReadonlySet<string>): (key: string) => string | undefined {
  const cache = new Map<string, string | null>();
  return (key) => {
    let name = cache.get(key);
    if (name === undefined) {
      const lower = key.toLowerCase();
      name = wanted.has(lower) ? lower : null;
      if (cache.size >= HEADER_NAME_CACHE_LIMIT) cache.clear();
      cache.set(key, name);
    }
    return name ?? undefined;
  };
}

/** One side's headers in a scan: members of a header object, or flat top-level fields. */
interface ScannedHeaders {
  names: readonly string[];
  /** Where each name's value lands in the scan (for a header object, known once the scanner is made). */
  slots: number[];
  /** The header object's number in the scan; undefined for flat fields. */
  group: number | undefined;
  /** Flat fields of a log that leaves out a header not sent: every line carries the side's headers. */
  omitsMissing: boolean;
  /** Whether some names are mapped to paths of their own (input.headers): they come after the source's. */
  mapped: boolean;
  /** For a header object: where the mapped names' values land (the object's own slots are known later). */
  mappedSlots: number[];
  /** The values of the line being read, per name. */
  values: unknown[];
  /** The headers built for recent combinations of values; where the next one goes, and the one given last. */
  recent: RecentHeaders[];
  recentNext: number;
  recentLast: number;
}

/** Header objects kept per side (scannedHeaders). */
const RECENT_HEADERS = 16;

/** A combination of one side's values and the header object they make (undefined: the side is not carried). */
interface RecentHeaders {
  values: unknown[];
  headers: Readonly<Record<string, string>> | undefined;
}

function sameValues(a: readonly unknown[], b: readonly unknown[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A scanner for a mapping, with where each field the parser reads lands in its values. */
interface ScannedFields {
  scanner: RecordScanner;
  time: number;
  /** One slot per latency path, in the order they are tried. */
  latency: number[];
  status: number;
  model: number;
  route: number;
  cohort: number;
  response: ScannedHeaders;
  request: ScannedHeaders;
  /** The token count slots, by TOKEN_TYPES' order; undefined when the mapping has none. */
  tokens: (number | undefined)[] | undefined;
  /** The prompt hash's slot; undefined when the mapping reads none. */
  promptHash: number | undefined;
}

/** The scanner for a mapping, or undefined when a key cannot be matched byte for byte (scannable()). */
function scannedFields(m: Mapping, opts: RecordParserOptions): ScannedFields | undefined {
  const fields: string[] = [];
  /** Per field: whether every use of it takes a list (labels and header values do; times and latencies do not). */
  const lists: boolean[] = [];
  const slot = (path: string, list: boolean): number => {
    const at = fields.indexOf(path);
    if (at >= 0) {
      lists[at] = (lists[at] as boolean) && list;
      return at;
    }
    lists.push(list);
    return fields.push(path) - 1;
  };
  const time = slot(m.time, false);
  const status = slot(m.status, false);
  const [model, route, cohort] = [m.model, m.route, m.cohort].map((p) => slot(p, true)) as [number, number, number];
  const latency = m.latency.map((p) => slot(p, false));
  const tokens = m.tokens === undefined ? undefined : TOKEN_TYPES.map((t) => (m.tokens?.[t] === undefined ? undefined : slot(m.tokens[t], false)));
  // A list allowed, as for a header value: Caddy and Kong log a request header as a list of values.
  const promptHash = m.promptHash === undefined ? undefined : slot(m.promptHash, true);
  const headerObjects: ScanLayout['headerObjects'][number][] = [];
  const side = (where: HeaderSource, wantedNames: readonly string[]): ScannedHeaders => {
    const split = splitNames(where, wantedNames);
    const fromSource = [...split.fromSource];
    const names = [...fromSource, ...split.mapped.map(([name]) => name)];
    const mappedSlots = split.mapped.map(([, path]) => slot(path, true));
    const memo = { values: names.map(() => undefined), recent: [], recentNext: 0, recentLast: 0, mapped: mappedSlots.length > 0, mappedSlots };
    if (where.path !== undefined && fromSource.length > 0) {
      const group = headerObjects.push({ path: where.path, names: fromSource }) - 1;
      // The scanner numbers header names after the fields, object by object.
      return { names, slots: [], group, omitsMissing: false, ...memo };
    }
    // Every name mapped away from a header object: the object is not read at all.
    const flat = where.path !== undefined ? [] : fromSource.map((n) => slot(flatHeaderField(where, n), true));
    return { names, slots: [...flat, ...mappedSlots], group: undefined, omitsMissing: where.path === undefined && fromSource.length > 0 && where.omitsMissing === true, ...memo };
  };
  const response = side(m.responseHeaders, opts.responseHeaderNames);
  const request = side(m.requestHeaders, opts.requestHeaderNames);
  const layout: ScanLayout = { fields, lists, headerObjects };
  // A path that is both a value and an object (or both sides at one path) is left to JSON.parse.
  if (!scannable(layout)) return undefined;
  const scanner = new RecordScanner(layout);
  for (const s of [response, request]) {
    if (s.group !== undefined) s.slots = [...s.names.slice(0, s.names.length - s.mappedSlots.length).map((_, i) => (scanner.headerBase[s.group as number] as number) + i), ...s.mappedSlots];
  }
  return { scanner, time, latency, status, model, route, cohort, response, request, tokens, promptHash };
}

/**
 * Token counts from the values at the mapping's paths (TOKEN_TYPES' order): a count is a non-negative
 * whole JSON number; anything else (absent, a string, an object) is no count. Undefined when there is none.
 * Both parse paths hand their values here: numbers and absence are the same values on both. It runs for
 * every line of a preset that maps tokens (the default one does), so it reads each slot in place rather
 * than mapping the slots to a new array first.
 */
function tokenCounts<S>(slots: readonly S[], value: (slot: S) => unknown): TokenCounts | undefined {
  let counts: TokenCounts | undefined;
  for (let i = 0; i < slots.length; i++) {
    const v = value(slots[i] as S);
    if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) (counts ??= {})[TOKEN_TYPES[i] as TokenType] = v + 0; // -0 is 0
  }
  return counts;
}

function epochMs(n: number): number {
  return n < EPOCH_MS_THRESHOLD ? n * 1000 : n;
}
