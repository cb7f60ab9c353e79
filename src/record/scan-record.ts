// Byte-level field extraction: reads the few fields a RecordParser needs straight from a line's UTF-8 bytes,
// without decoding the line or building its object (decoding plus JSON.parse was about half of `report`'s CPU).
// It validates the whole line as JSON while it goes, follows dotted paths into nested objects (Caddy's
// `request.headers`, Kong's `latencies.request`), and decodes only the kept strings that need it (non-ASCII
// text, escapes). Whatever it cannot settle exactly as JSON.parse would (an escaped key, an array where a
// kept value is other than a one-item list of a label or header, a header named twice, deep nesting) makes
// it decline; the caller then decodes the line and takes the JSON.parse path. A line that is not JSON, or
// JSON that is not an object, it says so without either: only where JSON.parse of the decoded line would
// say the same (decoding never turns a byte ≥ 0x80 into ASCII, so the syntax over ASCII bytes is the same).

import { chunkStops } from '../source/chunk-stops.js';

/** Stands for any object value kept in a field: the record parser only asks whether a value is an object. */
const NESTED: Readonly<Record<string, never>> = Object.freeze({});

/** What to keep from a line. */
export interface ScanLayout {
  /** Dotted paths whose values are kept, read from `values` by index (`a.b`: member b of the object at a). */
  fields: readonly string[];
  /**
   * Per field: whether a list may stand there (labels and header values, which read a list's first item or
   * join its items). A one-item list then reads as its item; an empty one as null; more items decline.
   */
  lists?: readonly boolean[];
  /** Dotted paths holding a header object; the members named in `names` (lower case, matched in any case) are kept. */
  headerObjects: readonly { path: string; names: readonly string[] }[];
}

/** What scan() found. */
export const SCAN_READ = 0;
/** Not settled here: decode the line and JSON.parse it. */
export const SCAN_DECLINED = 1;
/** Not JSON: JSON.parse of the decoded line throws. */
export const SCAN_INVALID = 2;
/** JSON, but not an object. */
export const SCAN_NOT_OBJECT = 3;
export type ScanOutcome = typeof SCAN_READ | typeof SCAN_DECLINED | typeof SCAN_INVALID | typeof SCAN_NOT_OBJECT;

const FAIL = -1;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
/** Deeper values are left to JSON.parse (skipping recurses). */
const MAX_DEPTH = 32;
/**
 * Below 2^53 the digits read as an integer are that integer exactly, and mantissa / 10^k (k ≤ 22) is then
 * correctly rounded (Clinger's fast path), as Number() is. Accumulated digit by digit, the mantissa stays
 * below 2^53 only if every step was exact (rounding never takes a value at or above 2^53 below it), so
 * the check is on the result: 16-digit times such as Caddy's 1796119596.782066 pass, 17-digit ones not.
 */
const EXACT_MANTISSA = 2 ** 53;
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);
/** Member codes: ≥ 0 a kept value's index in `values`; NOT_KEPT; ≤ CHILD_BASE the object node -code + CHILD_BASE. */
const NOT_KEPT = -1;
const CHILD_BASE = -2;
/** A key that is not plain (escaped, or non-ASCII where names are matched in any case): the line goes to JSON.parse. */
const BAD_KEY = -0x7fffffff;
/** A key that is not a JSON string (a control byte, the end of the line). */
const KEY_FAIL = -0x7ffffffe;
/** Key positions remembered per object: lines hold a handful of keys, a pathological one is not learnt from. */
const PREDICTED_KEYS = 64;
/** Distinct raw keys learnt per object kind: keys beyond are still read, by lookup, without being kept. */
const LEARNT_KEYS = 128;

/** How a kept string's bytes become its text. */
const PLAIN = 0;
/** Non-ASCII bytes, no escape: decoded as UTF-8. */
const UTF8 = 1;
/** An escape: JSON.parse of the string token alone. */
const ESCAPED = 2;

/**
 * Bytes to compare four at a time: their whole little-endian 32-bit words, then, when there are at least
 * four and not a multiple of four, the word of the last four bytes (overlapping the whole ones). Classes,
 * and the last word kept in `words`: entries spread from object literals, with that word as a field of its
 * own (a small integer in some, boxed in others), took so many shapes that sameBytes' property loads went
 * megamorphic, 14 % of the instructions of an Envoy line (cachegrind, bench/instructions.mjs).
 */
export class PackedBytes {
  readonly bytes: Uint8Array;
  readonly words: Int32Array;

  constructor(bytes: Uint8Array) {
    const len = bytes.length;
    const whole = len >> 2;
    const words = new Int32Array(len >= 4 && (len & 3) !== 0 ? whole + 1 : whole);
    const v = new DataView(bytes.buffer, bytes.byteOffset, len);
    for (let w = 0; w < whole; w++) words[w] = v.getInt32(w * 4, true);
    if (words.length > whole) words[whole] = v.getInt32(len - 4, true);
    this.bytes = bytes;
    this.words = words;
  }
}

/** A key's bytes and its member code. */
class KeyEntry extends PackedBytes {
  constructor(
    bytes: Uint8Array,
    readonly code: number,
  ) {
    super(bytes);
  }
}

/** Keys by length, as bytes, with what each one maps to. */
type KeyTable = (KeyEntry[] | undefined)[];

/**
 * Reads the keys of one kind of object (the top level, a nested object on a path, a header object). A key
 * met for the first time is resolved against the layout's keys (header names in any case) and its raw bytes
 * are learnt with the result, so it is matched byte for byte from then on. Gateways write the same keys in
 * the same order on every line, so the key the same position held in the previous line is tried first: a
 * byte compare up to its closing quote, instead of finding the quote and then looking the key up.
 */
class KeyReader {
  private readonly exact: KeyTable = [];
  private readonly folded: KeyTable = [];
  private readonly learnt: KeyTable = [];
  private learntCount = 0;
  /** Per key position: the key that position held in the last line (members() tries it first, inline). */
  readonly predicted: (KeyEntry | undefined)[] = [];
  /** Index after the closing quote of the key last read. */
  after = 0;

  constructor(exact: readonly (readonly [string, number])[], folded: readonly (readonly [string, number])[]) {
    for (const [key, code] of exact) add(this.exact, key, code);
    for (const [name, code] of folded) add(this.folded, name, code);
  }

  /** Whether names are matched in any case here: a non-ASCII key could then lower-case to one of them. */
  private get folds(): boolean {
    return this.folded.length > 0;
  }

  /**
   * The code of the key whose opening quote is at i, the n-th key of its object, when it is not the one
   * predicted: a member code, BAD_KEY or KEY_FAIL.
   */
  read(buf: Uint8Array, v: DataView, i: number, end: number, n: number): number {
    const s = i + 1;
    const keyEnd = plainStringEnd(buf, v, s, end);
    if (keyEnd === FAIL) return KEY_FAIL;
    if (buf[keyEnd] !== QUOTE) {
      // An escaped key may spell a kept one: only JSON.parse can tell. A non-ASCII one never equals an
      // ASCII key, unless names are matched in any case (the Kelvin sign lower-cases to "k").
      if (buf[keyEnd] === BACKSLASH || this.folds) return BAD_KEY;
      this.after = skipStringFrom(buf, v, keyEnd, end);
      if (this.after === FAIL) return KEY_FAIL;
      if (n < PREDICTED_KEYS) this.predicted[n] = undefined;
      return NOT_KEPT;
    }
    this.after = keyEnd + 1;
    let entry = find(this.learnt, buf, v, s, keyEnd, false);
    if (entry === undefined) {
      const code = (find(this.exact, buf, v, s, keyEnd, false) ?? find(this.folded, buf, v, s, keyEnd, true))?.code ?? NOT_KEPT;
      if (this.learntCount >= LEARNT_KEYS) return code;
      entry = new KeyEntry(copyOf(buf, s, keyEnd), code);
      (this.learnt[keyEnd - s] ??= []).push(entry);
      this.learntCount++;
    }
    if (n < PREDICTED_KEYS) this.predicted[n] = entry;
    return entry.code;
  }
}

/** A copy of buf[s, e) (never a view, as Buffer's own slice() is): the line's buffer is reused for the next ones. */
export function copyOf(buf: Uint8Array, s: number, e: number): Uint8Array {
  return Uint8Array.prototype.slice.call(buf, s, e);
}

/**
 * Whether buf[s, s + p.bytes.length) holds p's bytes (v: a view of buf): four at a time, then the last four
 * as one word, which overlaps the others, so no byte loop is left unless there are fewer than four.
 */
export function sameBytes(buf: Uint8Array, v: DataView, s: number, p: PackedBytes): boolean {
  const words = p.words;
  const len = p.bytes.length;
  if (len < 4) {
    const bytes = p.bytes;
    for (let j = 0; j < len; j++) if (buf[s + j] !== bytes[j]) return false;
    return true;
  }
  const whole = len >> 2;
  for (let w = 0; w < whole; w++) if (v.getInt32(s + w * 4, true) !== words[w]) return false;
  return whole === words.length || v.getInt32(s + len - 4, true) === words[whole];
}

function add(table: KeyTable, key: string, code: number): void {
  (table[key.length] ??= []).push(new KeyEntry(Buffer.from(key, 'latin1'), code));
}

/** An object on the layout's paths: the top level, or a member of one. */
interface ScanNode {
  keys: KeyReader;
  /** The header object this node is, or -1. */
  group: number;
  /** Kept values and header objects anywhere beneath it: reset when its key comes again (the last one wins). */
  slots: number[];
  groups: number[];
}

/** The layout as a tree of object nodes (node 0 the top level), or a reason it cannot be read byte for byte. */
interface Tree {
  nodes: ScanNode[];
  /** Per kept value: a header name (given twice in any case, it is combined by the JSON.parse path). */
  headerName: boolean[];
  lists: boolean[];
  headerBase: number[];
  count: number;
}

/** Plain ASCII, no quote or backslash, and not a property every object (or, under the top level, every array) has. */
function plainKey(k: string, nested: boolean): boolean {
  if (!/^[\x20-\x7e]*$/.test(k) || k.includes('"') || k.includes('\\') || k in {}) return false;
  // A nested step may meet an array, whose index and `length` members a property read would see.
  return !nested || (!(k in []) && !/^\d+$/.test(k));
}

function buildTree(layout: ScanLayout): Tree | undefined {
  interface Draft {
    /** Member key → kept value index, or child draft. */
    members: Map<string, number | Draft>;
    group: number;
    names: readonly string[];
  }
  const top: Draft = { members: new Map(), group: -1, names: [] };
  /** The draft at the object path `steps`, created as needed; undefined when a step is taken by a kept value. */
  const at = (steps: readonly string[]): Draft | undefined => {
    let d = top;
    for (const [depth, step] of steps.entries()) {
      if (!plainKey(step, depth > 0) || d.group >= 0) return undefined;
      let next = d.members.get(step);
      if (next === undefined) d.members.set(step, (next = { members: new Map(), group: -1, names: [] }));
      if (typeof next === 'number') return undefined;
      d = next;
    }
    return d;
  };
  const headerName: boolean[] = [];
  const lists: boolean[] = [];
  let count = 0;
  for (const [k, path] of layout.fields.entries()) {
    const steps = path.split('.');
    const key = steps.pop() as string;
    const d = at(steps);
    if (d === undefined || !plainKey(key, steps.length > 0) || d.members.has(key)) return undefined;
    d.members.set(key, count++);
    headerName[k] = false;
    lists[k] = layout.lists?.[k] ?? false;
  }
  const headerBase: number[] = [];
  for (const [g, h] of layout.headerObjects.entries()) {
    const d = at(h.path.split('.'));
    if (d === undefined || d === top || d.group >= 0 || h.names.some((n) => !plainKey(n, true) || n !== n.toLowerCase())) return undefined;
    // A header object holds kept values and names only; a kept member that is also a name would be both.
    for (const [key, m] of d.members) if (typeof m !== 'number' || h.names.includes(key.toLowerCase())) return undefined;
    if (new Set(h.names).size !== h.names.length) return undefined;
    d.group = g;
    d.names = h.names;
    headerBase[g] = count;
    for (let i = 0; i < h.names.length; i++) {
      headerName[count] = true;
      lists[count] = true;
      count++;
    }
  }
  const nodes: ScanNode[] = [];
  /** Builds node `d` and those beneath it; returns its index. */
  const build = (d: Draft): number => {
    const index = nodes.length;
    const node: ScanNode = { keys: undefined as unknown as KeyReader, group: d.group, slots: [], groups: [] };
    nodes.push(node);
    const exact: [string, number][] = [];
    for (const [key, m] of d.members) {
      if (typeof m === 'number') {
        exact.push([key, m]);
        node.slots.push(m);
        continue;
      }
      const child = build(m);
      exact.push([key, CHILD_BASE - child]);
      const c = nodes[child] as ScanNode;
      node.slots.push(...c.slots);
      node.groups.push(...c.groups);
    }
    const folded: [string, number][] = [];
    if (d.group >= 0) {
      node.groups.push(d.group);
      const base = headerBase[d.group] as number;
      d.names.forEach((n, i) => {
        folded.push([n, base + i]);
        node.slots.push(base + i);
      });
    }
    node.keys = new KeyReader(exact, folded);
    return index;
  };
  build(top);
  return { nodes, headerName, lists, headerBase, count };
}

/** Whether a layout's keys can be matched byte for byte as JSON.parse + property reads would match them. */
export function scannable(layout: ScanLayout): boolean {
  return buildTree(layout) !== undefined;
}

/** A kept string: its bytes are in `from`/`to` until text() makes it a string (timestamps rarely need to). */
export const TEXT: unique symbol = Symbol('text');

/** Strings kept per value for reuse: labels and header values repeat, and making a string costs ~130 ns. */
const RECENT_TEXTS = 8;

/** A recent kept string, with the bytes it was made from and how (PLAIN, UTF8 or ESCAPED). */
class RecentText extends PackedBytes {
  constructor(
    bytes: Uint8Array,
    readonly text: string,
    readonly kind: number,
  ) {
    super(bytes);
  }
}

export class RecordScanner {
  /**
   * Per kept value (the layout's fields, then each header object's names in order): its value in the last
   * line scanned. undefined when absent, TEXT for a string (read it with text()), NESTED for an object.
   */
  readonly values: unknown[];
  /** Per header object: whether the last line held an object at its path. */
  readonly objectSeen: boolean[];
  /** Per header object: the index in `values` of its first name. */
  readonly headerBase: readonly number[];
  /** Byte range of each TEXT value in the last line (the string's content, without its quotes). */
  readonly from: Int32Array;
  readonly to: Int32Array;
  /** PLAIN, UTF8 or ESCAPED, per TEXT value. */
  private readonly kinds: Uint8Array;
  private readonly nodes: readonly ScanNode[];
  private readonly headerName: readonly boolean[];
  private readonly lists: readonly boolean[];
  private readonly recent: RecentText[][];
  /** Per value: where the next new string goes in its ring, and the one text() gave last (tried first). */
  private readonly recentNext: Int32Array;
  private readonly recentLast: Int32Array;
  /** Per TEXT value of the last line: the entry of its ring with its bytes, or -1 when none has them. */
  private readonly known: Int32Array;
  /** The line being read; only valid until the next scan. */
  private buf: Buffer = Buffer.alloc(0);
  /** A view of the buffer the line is in, for reading four bytes at a time (made once per buffer). */
  view: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));
  private viewOf: Uint8Array | undefined;
  /** Value of the last number parsed. */
  private number = 0;
  /** Whether the last string whose end was found held an escape. */
  private escaped = false;
  /** Set when the scan stops at something only JSON.parse can settle (as opposed to a syntax error). */
  private declined = false;

  constructor(layout: ScanLayout) {
    const tree = buildTree(layout);
    if (tree === undefined) throw new Error('RecordScanner: layout keys cannot be matched byte for byte');
    const n = tree.count;
    this.nodes = tree.nodes;
    this.headerName = tree.headerName;
    this.lists = tree.lists;
    this.headerBase = tree.headerBase;
    this.values = new Array<unknown>(n).fill(undefined);
    this.from = new Int32Array(n);
    this.to = new Int32Array(n);
    this.kinds = new Uint8Array(n);
    this.recent = Array.from({ length: n }, () => []);
    this.recentNext = new Int32Array(n);
    this.recentLast = new Int32Array(n);
    this.known = new Int32Array(n);
    this.objectSeen = layout.headerObjects.map(() => false);
  }

  /** Reads buf[start, end): SCAN_READ when every kept value was read exactly, else what the line is. */
  scan(buf: Buffer, start: number, end: number): ScanOutcome {
    this.buf = buf;
    if (buf !== this.viewOf) {
      this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
      this.viewOf = buf;
    }
    this.declined = false;
    const values = this.values;
    for (let k = 0; k < values.length; k++) values[k] = undefined;
    for (let g = 0; g < this.objectSeen.length; g++) this.objectSeen[g] = false;
    // Strings' ends come from the chunk's map when the line is in a chunk being read (chunk-stops.ts).
    chunkStops.cover(buf, start, end);
    let i = ws(buf, start, end);
    if (i >= end) return SCAN_INVALID;
    if (buf[i] !== LBRACE) {
      i = this.skip(buf, i, end, 0);
      if (i === FAIL) return this.declined ? SCAN_DECLINED : SCAN_INVALID;
      return ws(buf, i, end) === end ? SCAN_NOT_OBJECT : SCAN_INVALID;
    }
    i = this.members(buf, i + 1, end, 0, 1);
    if (i === FAIL) return this.declined ? SCAN_DECLINED : SCAN_INVALID;
    return ws(buf, i, end) === end ? SCAN_READ : SCAN_INVALID;
  }

  /** The string of TEXT value k of the last line, reusing a recent one with the same bytes. */
  text(k: number): string {
    const recent = this.recent[k] as RecentText[];
    const known = this.known[k] as number;
    // value() looked for its bytes in the ring already.
    if (known >= 0) {
      this.recentLast[k] = known;
      return (recent[known] as RecentText).text;
    }
    const buf = this.buf;
    const s = this.from[k] as number;
    const e = this.to[k] as number;
    // Decoding the string alone equals decoding the line: it is bounded by ASCII quotes, and an ASCII byte
    // ends any incomplete UTF-8 sequence before it the same way in both.
    const kind = this.kinds[k];
    const made = kind === PLAIN ? buf.toString('latin1', s, e) : kind === UTF8 ? buf.toString('utf8', s, e) : (JSON.parse(buf.toString('utf8', s - 1, e + 1)) as string);
    const at = this.recentNext[k] as number;
    recent[at] = new RecentText(copyOf(buf, s, e), made, kind as number);
    this.recentNext[k] = (at + 1) % RECENT_TEXTS;
    this.recentLast[k] = at;
    this.known[k] = at;
    return made;
  }

  /** Whether TEXT value k is plain ASCII (its bytes are its characters). */
  plain(k: number): boolean {
    return this.kinds[k] === PLAIN;
  }

  /**
   * TEXT value k read as a plain decimal (digits, optionally "." and digits; an integer mantissa below
   * 2^53, at most 22 decimals), or NaN. It is then exactly Number() of the text (Clinger's fast path), with
   * no string made.
   */
  decimal(k: number): number {
    if (this.kinds[k] !== PLAIN) return NaN;
    const buf = this.buf;
    const end = this.to[k] as number;
    let i = this.from[k] as number;
    let mantissa = 0;
    let digits = 0;
    let fraction = -1;
    for (; i < end; i++) {
      const d = (buf[i] as number) - ZERO;
      if (d >= 0 && d <= 9) {
        mantissa = mantissa * 10 + d;
        digits++;
        if (fraction >= 0) fraction++;
      } else if (d === DOT - ZERO && fraction < 0 && digits > 0) {
        fraction = 0;
      } else {
        return NaN;
      }
    }
    if (digits === 0 || mantissa >= EXACT_MANTISSA || fraction === 0 || fraction >= POW10.length) return NaN;
    return fraction > 0 ? mantissa / (POW10[fraction] as number) : mantissa;
  }

  /** TEXT value k read as digits only ("200", "007"), or -1 (empty, or any other character). */
  digits(k: number): number {
    const buf = this.buf;
    const end = this.to[k] as number;
    let i = this.from[k] as number;
    if (i >= end || this.kinds[k] !== PLAIN) return -1;
    let n = 0;
    for (; i < end; i++) {
      const d = (buf[i] as number) - ZERO;
      if (!(d >= 0 && d <= 9)) return -1;
      n = n * 10 + d;
    }
    return n;
  }

  /** Marks the scan as declined; returns FAIL to unwind. */
  private decline(): number {
    this.declined = true;
    return FAIL;
  }

  /** The members of object node `node` from after its `{`, at nesting `depth`: the index after its `}`. */
  private members(buf: Buffer, i: number, end: number, node: number, depth: number): number {
    i = ws(buf, i, end);
    if (i < end && buf[i] === RBRACE) return i + 1;
    const keys = (this.nodes[node] as ScanNode).keys;
    const predicted = keys.predicted;
    const v = this.view;
    for (let n = 0; ; n++) {
      if (i >= end || buf[i] !== QUOTE) return FAIL;
      // The key this position held in the last line, as one compare up to its closing quote.
      const p = predicted[n];
      let code: number;
      if (p !== undefined && i + 1 + p.bytes.length < end && buf[i + 1 + p.bytes.length] === QUOTE && sameBytes(buf, v, i + 1, p)) {
        code = p.code;
        i += p.bytes.length + 2;
      } else {
        code = keys.read(buf, v, i, end, n);
        if (code <= KEY_FAIL) return code === BAD_KEY ? this.decline() : FAIL;
        i = keys.after;
      }
      i = ws(buf, i, end);
      if (i >= end || buf[i] !== COLON) return FAIL;
      i = ws(buf, i + 1, end);
      if (code >= 0) i = this.kept(buf, i, end, code, depth);
      else if (code === NOT_KEPT) i = this.skip(buf, i, end, depth);
      else i = this.child(buf, i, end, CHILD_BASE - code, depth);
      if (i === FAIL) return FAIL;
      i = ws(buf, i, end);
      if (i >= end) return FAIL;
      const b = buf[i];
      if (b === COMMA) {
        i = ws(buf, i + 1, end);
        continue;
      }
      return b === RBRACE ? i + 1 : FAIL;
    }
  }

  /**
   * The value under a node's key: an object's members, or anything else (nothing beneath it then). Either
   * way what an earlier member with the same key held is dropped: the last one wins, as with JSON.parse.
   */
  private child(buf: Buffer, i: number, end: number, c: number, depth: number): number {
    const node = this.nodes[c] as ScanNode;
    const values = this.values;
    for (const k of node.slots) values[k] = undefined;
    for (const g of node.groups) this.objectSeen[g] = false;
    if (i >= end || buf[i] !== LBRACE) return this.skip(buf, i, end, depth);
    if (node.group >= 0) this.objectSeen[node.group] = true;
    return this.members(buf, i + 1, end, c, depth + 1);
  }

  /** A kept member's value. A header name given twice (in any case) is combined by the JSON.parse path. */
  private kept(buf: Buffer, i: number, end: number, k: number, depth: number): number {
    if (this.headerName[k] === true && this.values[k] !== undefined) return this.decline();
    return this.value(buf, i, end, k, depth);
  }

  /** A kept value: a string, an object (NESTED), a number, true, false, null, or a list where allowed. */
  private value(buf: Buffer, i: number, end: number, k: number, depth: number): number {
    const b = buf[i];
    if (b === QUOTE) {
      const s = i + 1;
      // A string text() made lately, compared up to its closing quote before any scan: its bytes are a
      // whole string's content, so the same bytes then a quote are that string (labels and header values
      // repeat). Only values whose text was asked for fill the ring, so one that varies (a time) costs nothing here.
      const recent = this.recent[k] as RecentText[];
      if (recent.length > 0) {
        const last = this.recentLast[k] as number;
        for (let r = 0; r < recent.length; r++) {
          const at = r === 0 ? last : r === last ? 0 : r;
          const t = recent[at] as RecentText;
          const close = s + t.bytes.length;
          if (close < end && buf[close] === QUOTE && sameBytes(buf, this.view, s, t)) {
            this.values[k] = TEXT;
            this.kinds[k] = t.kind;
            this.from[k] = s;
            this.to[k] = close;
            this.known[k] = at;
            return close + 1;
          }
        }
      }
      this.known[k] = -1;
      let close = plainStringEnd(buf, this.view, s, end);
      if (close === FAIL) return FAIL;
      let kind = PLAIN;
      if (buf[close] !== QUOTE) {
        close = this.stringEnd(buf, close, end);
        if (close === FAIL) return FAIL;
        kind = this.escaped ? ESCAPED : UTF8;
      }
      this.values[k] = TEXT;
      this.kinds[k] = kind;
      this.from[k] = s;
      this.to[k] = close;
      return close + 1;
    }
    if (b === LBRACE) {
      this.values[k] = NESTED;
      return this.skip(buf, i, end, depth);
    }
    if (b === MINUS || (b !== undefined && b >= ZERO && b <= NINE)) {
      const next = this.numberAt(buf, i, end);
      this.values[k] = this.number;
      return next;
    }
    if (b === LBRACKET) return this.lists[k] === true ? this.list(buf, i, end, k, depth) : this.decline();
    const lit = literalEnd(buf, i, end);
    this.values[k] = b === 0x74 ? true : b === 0x66 ? false : null;
    return lit;
  }

  /**
   * A list where a label or header value is (Caddy, Kong): one item reads as that item (a label takes a
   * list's first item, a header joins them: the same for one), none as null (no label, no header value).
   */
  private list(buf: Buffer, i: number, end: number, k: number, depth: number): number {
    i = ws(buf, i + 1, end);
    if (i < end && buf[i] === RBRACKET) {
      this.values[k] = null;
      return i + 1;
    }
    // A list in the list: a label reads none, a header skips it; left to JSON.parse.
    if (i >= end || buf[i] === LBRACKET || depth >= MAX_DEPTH) return this.decline();
    i = this.value(buf, i, end, k, depth + 1);
    if (i === FAIL) return FAIL;
    i = ws(buf, i, end);
    if (i < end && buf[i] === RBRACKET) return i + 1;
    // Several items are joined with ", " by the JSON.parse path.
    return i < end && buf[i] === COMMA ? this.decline() : FAIL;
  }

  /** Skips (and validates) any JSON value. */
  private skip(buf: Buffer, i: number, end: number, depth: number): number {
    if (i >= end) return FAIL;
    const b = buf[i] as number;
    if (b === QUOTE) return skipStringFrom(buf, this.view, i + 1, end);
    if (b === LBRACE || b === LBRACKET) {
      if (depth > MAX_DEPTH) return this.decline();
      const isObject = b === LBRACE;
      const close = isObject ? RBRACE : RBRACKET;
      i = ws(buf, i + 1, end);
      if (i < end && buf[i] === close) return i + 1;
      for (;;) {
        if (isObject) {
          if (i >= end || buf[i] !== QUOTE) return FAIL;
          i = skipStringFrom(buf, this.view, i + 1, end);
          if (i === FAIL) return FAIL;
          i = ws(buf, i, end);
          if (i >= end || buf[i] !== COLON) return FAIL;
          i = ws(buf, i + 1, end);
        }
        i = this.skip(buf, i, end, depth + 1);
        if (i === FAIL) return FAIL;
        i = ws(buf, i, end);
        if (i >= end) return FAIL;
        if (buf[i] === COMMA) {
          i = ws(buf, i + 1, end);
          continue;
        }
        return buf[i] === close ? i + 1 : FAIL;
      }
    }
    if (b === MINUS || (b >= ZERO && b <= NINE)) return skipNumber(buf, i, end);
    return literalEnd(buf, i, end);
  }

  /**
   * From the first byte of a string that is not plain ASCII (a backslash or ≥ 0x80): the index of its
   * closing quote, or FAIL; `escaped` says whether it held an escape.
   */
  private stringEnd(buf: Uint8Array, i: number, end: number): number {
    this.escaped = false;
    if (mapped(buf, i, end)) {
      const close = mappedStringEnd(buf, i, end);
      this.escaped = mappedEscape;
      return close;
    }
    while (i < end) {
      const b = buf[i] as number;
      if (b === QUOTE) return i;
      if (b < 0x20) return FAIL;
      if (b === BACKSLASH) {
        const next = escapeEnd(buf, i, end);
        if (next === FAIL) return FAIL;
        this.escaped = true;
        i = next;
        continue;
      }
      i++;
    }
    return FAIL;
  }

  /** A JSON number from i; its value in this.number. Returns the index after it. */
  private numberAt(buf: Buffer, i: number, end: number): number {
    const from = i;
    const negative = buf[i] === MINUS;
    if (negative) i++;
    let mantissa = 0;
    let fraction = 0;
    let b = i < end ? (buf[i] as number) : -1;
    if (b === ZERO) {
      b = ++i < end ? (buf[i] as number) : -1;
    } else if (b > ZERO && b <= NINE) {
      do {
        mantissa = mantissa * 10 + (b - ZERO);
        b = ++i < end ? (buf[i] as number) : -1;
      } while (b >= ZERO && b <= NINE);
    } else {
      return FAIL;
    }
    if (b === DOT) {
      b = ++i < end ? (buf[i] as number) : -1;
      if (!(b >= ZERO && b <= NINE)) return FAIL;
      do {
        mantissa = mantissa * 10 + (b - ZERO);
        fraction++;
        b = ++i < end ? (buf[i] as number) : -1;
      } while (b >= ZERO && b <= NINE);
    }
    let exact = mantissa < EXACT_MANTISSA && fraction < POW10.length;
    if (b === 0x65 || b === 0x45 /* e E */) {
      exact = false;
      b = ++i < end ? (buf[i] as number) : -1;
      if (b === 0x2b || b === MINUS) b = ++i < end ? (buf[i] as number) : -1;
      if (!(b >= ZERO && b <= NINE)) return FAIL;
      do b = ++i < end ? (buf[i] as number) : -1;
      while (b >= ZERO && b <= NINE);
    }
    if (exact) {
      const magnitude = mantissa / (POW10[fraction] as number);
      this.number = negative ? -magnitude : magnitude;
    } else {
      this.number = Number(buf.toString('latin1', from, i));
    }
    return i;
  }
}

/** Skips (and validates) a JSON number from i, without its value: the index after it, or FAIL. */
function skipNumber(buf: Uint8Array, i: number, end: number): number {
  if (buf[i] === MINUS) i++;
  let b = i < end ? (buf[i] as number) : -1;
  if (b === ZERO) b = ++i < end ? (buf[i] as number) : -1;
  else if (b > ZERO && b <= NINE) {
    do b = ++i < end ? (buf[i] as number) : -1;
    while (b >= ZERO && b <= NINE);
  } else return FAIL;
  if (b === DOT) {
    b = ++i < end ? (buf[i] as number) : -1;
    if (!(b >= ZERO && b <= NINE)) return FAIL;
    do b = ++i < end ? (buf[i] as number) : -1;
    while (b >= ZERO && b <= NINE);
  }
  if (b === 0x65 || b === 0x45) {
    b = ++i < end ? (buf[i] as number) : -1;
    if (b === 0x2b || b === MINUS) b = ++i < end ? (buf[i] as number) : -1;
    if (!(b >= ZERO && b <= NINE)) return FAIL;
    do b = ++i < end ? (buf[i] as number) : -1;
    while (b >= ZERO && b <= NINE);
  }
  return i;
}

/** Skips JSON whitespace. */
function ws(buf: Uint8Array, i: number, end: number): number {
  while (i < end) {
    const b = buf[i] as number;
    // One comparison for the byte that usually follows (compact JSON has no whitespace).
    if (b > 0x20 || (b !== 0x20 && b !== 0x09 && b !== 0x0d && b !== 0x0a)) break;
    i++;
  }
  return i;
}

/**
 * From just inside a string's opening quote: the index of its closing quote, or of the first byte that is
 * not plain printable ASCII (a backslash, or ≥ 0x80), or FAIL at a control byte or the end of the line.
 */
function plainStringEnd(buf: Uint8Array, v: DataView, i: number, end: number): number {
  if (mapped(buf, i, end)) {
    const m = chunkStops;
    const at = nextStop(m.plainEnds, i - m.base, end - m.base);
    if (at < 0) return FAIL;
    return (buf[at + m.base] as number) < 0x20 ? FAIL : at + m.base;
  }
  // Four bytes at a time while none of them ends the run (this loop reads most of every line).
  while (i + 4 <= end) {
    const w = v.getInt32(i, true);
    if ((stops(w) | (w & HIGH)) !== 0) break;
    i += 4;
  }
  while (i < end) {
    const b = buf[i] as number;
    if (STRING_STOP[b] !== 0) return b < 0x20 ? FAIL : i;
    i++;
  }
  return FAIL;
}

/** Whether buf[i, end) is in the chunk map's window (chunk-stops.ts): strings' ends are read from it then. */
function mapped(buf: Uint8Array, i: number, end: number): boolean {
  const m = chunkStops;
  return buf === m.buf && i >= m.base && end <= m.limit;
}

/** Whether the string mappedStringEnd() read last held an escape (one result more, without an object per call). */
let mappedEscape = false;

/**
 * From any byte inside a string in the mapped window: the index of its closing quote, or FAIL at a control
 * byte, a bad escape or the end of the line; mappedEscape says whether it held an escape.
 */
function mappedStringEnd(buf: Uint8Array, i: number, end: number): number {
  const m = chunkStops;
  mappedEscape = false;
  for (;;) {
    const at = nextStop(m.ends, i - m.base, end - m.base);
    if (at < 0) return FAIL;
    const b = buf[at + m.base] as number;
    if (b === QUOTE) return at + m.base;
    if (b < 0x20) return FAIL;
    i = escapeEnd(buf, at + m.base, end);
    if (i === FAIL) return FAIL;
    mappedEscape = true;
  }
}

/**
 * The first set bit at or after position p of a chunk map, below limit (both relative to the mapped
 * window), or -1: one word of 32 positions at a time.
 */
function nextStop(map: Int32Array, p: number, limit: number): number {
  if (p >= limit) return -1;
  let w = p >> 5;
  let word = (map[w] as number) & (-1 << (p & 31));
  const last = (limit - 1) >> 5;
  while (word === 0) {
    if (++w > last) return -1;
    word = map[w] as number;
  }
  const at = (w << 5) + 31 - Math.clz32(word & -word);
  return at < limit ? at : -1;
}

/** The high bit of each byte of a word. */
const HIGH = 0x80808080 | 0;

/**
 * Non-zero when a word (four bytes, any order) holds a quote, a backslash or a control byte: the classic
 * has-zero-byte and has-less-than tests, exact as a whole (a borrow only flags bytes above a true one).
 */
function stops(w: number): number {
  const q = w ^ 0x22222222;
  const b = w ^ 0x5c5c5c5c;
  return (((w - 0x20202020) & ~w) | ((q - 0x01010101) & ~q) | ((b - 0x01010101) & ~b)) & HIGH;
}

/** Bytes that end a plain ASCII run inside a string: controls, the quote, the backslash, and ≥ 0x80. */
const STRING_STOP = Uint8Array.from({ length: 256 }, (_, b) => (b < 0x20 || b === QUOTE || b === BACKSLASH || b >= 0x80 ? 1 : 0));

/** The index after the escape whose backslash is at i, or FAIL when it is not one JSON allows. */
function escapeEnd(buf: Uint8Array, i: number, end: number): number {
  const e = buf[i + 1];
  if (e === 0x75 /* u */) {
    for (let h = i + 2; h < i + 6; h++) if (h >= end || !isHex(buf[h] as number)) return FAIL;
    return i + 6;
  }
  // " \ / b f n r t
  if (i + 1 >= end || !(e === QUOTE || e === BACKSLASH || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74)) return FAIL;
  return i + 2;
}

/**
 * Skips the rest of a string that is not kept, from any byte inside it; returns the index after its closing
 * quote. Bytes ≥ 0x80 pass as they are: decoding never turns them into a quote or a backslash.
 */
function skipStringFrom(buf: Uint8Array, v: DataView, i: number, end: number): number {
  if (mapped(buf, i, end)) {
    const close = mappedStringEnd(buf, i, end);
    return close === FAIL ? FAIL : close + 1;
  }
  for (;;) {
    while (i + 4 <= end && stops(v.getInt32(i, true)) === 0) i += 4;
    if (i >= end) return FAIL;
    const b = buf[i] as number;
    if (STRING_STOP[b] === 0 || b >= 0x80) {
      i++;
      continue;
    }
    if (b === QUOTE) return i + 1;
    if (b < 0x20) return FAIL;
    i = escapeEnd(buf, i, end);
    if (i === FAIL) return FAIL;
  }
}

function isHex(b: number): boolean {
  return (b >= ZERO && b <= NINE) || (b >= 0x61 && b <= 0x66) || (b >= 0x41 && b <= 0x46);
}

/** true, false or null at i: the index after it, or FAIL. */
function literalEnd(buf: Uint8Array, i: number, end: number): number {
  const b = buf[i];
  const word = b === 0x74 ? TRUE : b === 0x66 ? FALSE : b === 0x6e ? NULL : undefined;
  if (word === undefined || i + word.length > end) return FAIL;
  for (let j = 1; j < word.length; j++) if (buf[i + j] !== word[j]) return FAIL;
  return i + word.length;
}

const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');
const NULL = Buffer.from('null');

/**
 * The entry of key bytes [s, e) in the table (v: a view of buf); `fold`: ASCII letters match in any case.
 * Exact keys are compared four bytes at a time: this is the path of every key a line does not hold where
 * the line before held it (Caddy's header objects come in a new order each line).
 */
function find(table: KeyTable, buf: Uint8Array, v: DataView, s: number, e: number, fold: boolean): KeyEntry | undefined {
  const candidates = table[e - s];
  if (candidates === undefined) return undefined;
  for (const entry of candidates) {
    if (!fold) {
      if (sameBytes(buf, v, s, entry)) return entry;
      continue;
    }
    const bytes = entry.bytes;
    const len = bytes.length;
    let j = 0;
    while (j < len) {
      const b = buf[s + j] as number;
      if ((b >= 0x41 && b <= 0x5a ? b + 0x20 : b) !== bytes[j]) break;
      j++;
    }
    if (j === len) return entry;
  }
  return undefined;
}
