// Byte-level field extraction: reads the few fields a RecordParser needs straight from a line's UTF-8 bytes,
// without decoding the line or building its object (decoding plus JSON.parse was about half of `report`'s CPU).
// It validates the whole line as JSON while it goes. Whatever it cannot settle exactly as JSON.parse would
// (an escape, a non-ASCII byte or a control byte in a kept string, an array where a kept value is, a header
// named twice, deep nesting, a top level that is not an object) makes it give up; the caller then decodes
// the line and takes the JSON.parse path. So it is only ever a shortcut, never a second opinion.

/** Stands for any object value kept in a field: the record parser only asks whether a value is an object. */
const NESTED: Readonly<Record<string, never>> = Object.freeze({});

/** What to keep from a line. */
export interface ScanLayout {
  /** Top-level keys whose scalar values are kept, read from `values` by index. */
  fields: readonly string[];
  /** Top-level keys holding a header object; the members named in `names` (lower case, matched in any case) are kept. */
  headerObjects: readonly { key: string; names: readonly string[] }[];
}

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
/** Up to 15 digits the mantissa is an exact integer, and mantissa / 10^k (k ≤ 22) is correctly rounded (Clinger's fast path), as Number() is. */
const MAX_FAST_DIGITS = 15;
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);
/** Top-level key codes below 0: not kept (-1), or header object number -code - 2. */
const NOT_KEPT = -1;
/** members() of the top-level object (header objects are numbered from 0). */
const TOP = -1;

interface KeyEntry {
  bytes: Uint8Array;
  code: number;
}

/** Keys by length, as bytes, with what each one maps to. */
type KeyTable = (KeyEntry[] | undefined)[];

/** A key that is not plain (escaped, or non-ASCII where that matters): the line goes to JSON.parse. */
const BAD_KEY = -0x7fffffff;
/** Key positions remembered per object: lines hold a handful of keys, a pathological one is not learnt from. */
const PREDICTED_KEYS = 64;

/**
 * Reads the keys of one kind of object (the top level, or one header object). Gateways write the same keys
 * in the same order on every line, so the key the same position held in the previous line is tried first:
 * a byte compare up to its closing quote, instead of finding the quote and then looking the key up.
 */
class KeyReader {
  private readonly table: KeyTable = [];
  private readonly predicted: (KeyEntry | undefined)[] = [];
  /** Index after the closing quote of the key last read. */
  after = 0;

  constructor(
    keys: readonly string[],
    codes: readonly number[],
    /** ASCII letters match in any case (header names). */
    private readonly fold: boolean,
    /** A non-ASCII key is simply not kept (top level), rather than left to JSON.parse (header names, lower-cased there). */
    private readonly nonAsciiNotKept: boolean,
  ) {
    keys.forEach((key, i) => {
      const bytes = Buffer.from(key, 'latin1');
      (this.table[bytes.length] ??= []).push({ bytes, code: codes[i] as number });
    });
  }

  /** The code of the key whose opening quote is at i, the n-th key of its object: NOT_KEPT, BAD_KEY, or its code. */
  read(buf: Uint8Array, i: number, end: number, n: number): number {
    const s = i + 1;
    const p = this.predicted[n];
    if (p !== undefined) {
      const bytes = p.bytes;
      const len = bytes.length;
      if (s + len < end && buf[s + len] === QUOTE) {
        let j = 0;
        while (j < len && buf[s + j] === bytes[j]) j++;
        if (j === len) {
          this.after = s + len + 1;
          return p.code;
        }
      }
    }
    const keyEnd = plainStringEnd(buf, s, end);
    if (keyEnd === FAIL) return BAD_KEY;
    const b = buf[keyEnd];
    let entry: KeyEntry | undefined;
    if (b === QUOTE) {
      entry = lookup(this.table, buf, s, keyEnd, this.fold);
      this.after = keyEnd + 1;
    } else {
      // An escaped key may spell a kept one: only JSON.parse can tell.
      if (b === BACKSLASH || !this.nonAsciiNotKept) return BAD_KEY;
      this.after = skipStringFrom(buf, keyEnd, end);
      if (this.after === FAIL) return BAD_KEY;
    }
    if (n < PREDICTED_KEYS) this.predicted[n] = entry;
    return entry === undefined ? NOT_KEPT : entry.code;
  }
}

/** Whether a layout's keys can be matched byte for byte as JSON.parse + property reads would match them. */
export function scannable(layout: ScanLayout): boolean {
  const top = [...layout.fields, ...layout.headerObjects.map((h) => h.key)];
  const names = layout.headerObjects.flatMap((h) => h.names);
  // Plain ASCII keys only, none inherited from Object.prototype (`in` and property reads would see those).
  const plain = (k: string): boolean => /^[\x20-\x7e]*$/.test(k) && !k.includes('"') && !k.includes('\\') && !(k in {});
  return (
    top.every(plain) &&
    names.every((n) => plain(n) && n === n.toLowerCase()) &&
    new Set(top).size === top.length
  );
}

/** A kept string: its bytes are in `from`/`to` until text() makes it a string (timestamps rarely need to). */
export const TEXT: unique symbol = Symbol('text');

/** Strings kept per value for reuse: labels and header values repeat, and making a string costs ~130 ns. */
const RECENT_TEXTS = 8;

export class RecordScanner {
  /**
   * Per kept value (the layout's fields, then each header object's names in order): its value in the last
   * line scanned. undefined when absent, TEXT for a string (read it with text()), NESTED for an object.
   */
  readonly values: unknown[];
  /** Per header object: whether the last line held an object under its key. */
  readonly objectSeen: boolean[];
  /** Per header object: the index in `values` of its first name. */
  readonly headerBase: readonly number[];
  /** Byte range of each TEXT value in the last line. */
  readonly from: Int32Array;
  readonly to: Int32Array;
  private readonly topKeys: KeyReader;
  private readonly nameKeys: KeyReader[];
  /** Names per header object. */
  private readonly nameCount: readonly number[];
  private readonly recent: string[][];
  private readonly recentNext: Int32Array;
  /** The line being read; only valid until the next scan. */
  private buf: Buffer = Buffer.alloc(0);
  /** Value of the last number parsed. */
  private number = 0;

  constructor(layout: ScanLayout) {
    if (!scannable(layout)) throw new Error('RecordScanner: layout keys cannot be matched byte for byte');
    let n = layout.fields.length;
    this.headerBase = layout.headerObjects.map((h) => {
      const base = n;
      n += h.names.length;
      return base;
    });
    this.values = new Array<unknown>(n).fill(undefined);
    this.from = new Int32Array(n);
    this.to = new Int32Array(n);
    this.recent = Array.from({ length: n }, () => []);
    this.recentNext = new Int32Array(n);
    this.topKeys = new KeyReader(
      [...layout.fields, ...layout.headerObjects.map((h) => h.key)],
      [...layout.fields.map((_, i) => i), ...layout.headerObjects.map((_, g) => -g - 2)],
      false,
      true,
    );
    this.objectSeen = layout.headerObjects.map(() => false);
    this.nameKeys = layout.headerObjects.map((h) => new KeyReader(h.names, h.names.map((_, i) => i), true, false));
    this.nameCount = layout.headerObjects.map((h) => h.names.length);
  }

  /** Reads buf[start, end); true when every kept value was read exactly, false to take the JSON.parse path. */
  scan(buf: Buffer, start: number, end: number): boolean {
    this.buf = buf;
    const values = this.values;
    for (let k = 0; k < values.length; k++) values[k] = undefined;
    for (let g = 0; g < this.objectSeen.length; g++) this.objectSeen[g] = false;
    let i = ws(buf, start, end);
    if (i >= end || buf[i] !== LBRACE) return false;
    i = this.members(buf, i + 1, end, TOP);
    return i !== FAIL && ws(buf, i, end) === end;
  }

  /** The string of TEXT value k of the last line, reusing a recent one with the same bytes. */
  text(k: number): string {
    const buf = this.buf;
    const s = this.from[k] as number;
    const len = (this.to[k] as number) - s;
    const recent = this.recent[k] as string[];
    for (let r = 0; r < recent.length; r++) {
      const t = recent[r] as string;
      if (t.length !== len) continue;
      let j = 0;
      while (j < len && t.charCodeAt(j) === buf[s + j]) j++;
      if (j === len) return t;
    }
    const made = buf.toString('latin1', s, s + len);
    const at = this.recentNext[k] as number;
    recent[at] = made;
    this.recentNext[k] = (at + 1) % RECENT_TEXTS;
    return made;
  }

  /**
   * The members of an object from after its `{`, returning the index after its `}`: the top level when g is
   * TOP, else header object g (whose names are read in any case).
   */
  private members(buf: Buffer, i: number, end: number, g: number): number {
    i = ws(buf, i, end);
    if (buf[i] === RBRACE && i < end) return i + 1;
    const keys = g === TOP ? this.topKeys : (this.nameKeys[g] as KeyReader);
    for (let n = 0; ; n++) {
      if (i >= end || buf[i] !== QUOTE) return FAIL;
      const code = keys.read(buf, i, end, n);
      if (code === BAD_KEY) return FAIL;
      i = ws(buf, keys.after, end);
      if (i >= end || buf[i] !== COLON) return FAIL;
      i = ws(buf, i + 1, end);
      i = g === TOP ? this.topMember(buf, i, end, code) : this.headerMember(buf, i, end, g, code);
      if (i === FAIL) return FAIL;
      i = ws(buf, i, end);
      if (i >= end) return FAIL;
      if (buf[i] === COMMA) {
        i = ws(buf, i + 1, end);
        continue;
      }
      return buf[i] === RBRACE ? i + 1 : FAIL;
    }
  }

  /** A top-level member's value: kept (code ≥ 0), skipped, or a header object (code -g - 2). */
  private topMember(buf: Buffer, i: number, end: number, code: number): number {
    if (code >= 0) return this.value(buf, i, end, code);
    if (code === NOT_KEPT) return this.skip(buf, i, end, 1);
    return this.headerObject(buf, i, end, -code - 2);
  }

  /** A kept value: a plain string, an object (NESTED), a number, true, false or null. Arrays fail. */
  private value(buf: Buffer, i: number, end: number, k: number): number {
    const b = buf[i];
    if (b === QUOTE) {
      const close = plainStringEnd(buf, i + 1, end);
      if (close === FAIL || buf[close] !== QUOTE) return FAIL;
      this.values[k] = TEXT;
      this.from[k] = i + 1;
      this.to[k] = close;
      return close + 1;
    }
    if (b === LBRACE) {
      this.values[k] = NESTED;
      return this.skip(buf, i, end, 2);
    }
    if (b === MINUS || (b !== undefined && b >= ZERO && b <= NINE)) {
      const next = this.numberAt(buf, i, end);
      this.values[k] = this.number;
      return next;
    }
    const lit = literalEnd(buf, i, end);
    this.values[k] = b === 0x74 ? true : b === 0x66 ? false : null;
    return lit;
  }

  /**
   * A top-level value under a header object's key: an object's kept members, or anything else (no headers).
   * Duplicate keys: the last one wins, as with JSON.parse.
   */
  private headerObject(buf: Buffer, i: number, end: number, g: number): number {
    const base = this.headerBase[g] as number;
    const values = this.values;
    for (let k = base; k < base + (this.nameCount[g] as number); k++) values[k] = undefined;
    this.objectSeen[g] = i < end && buf[i] === LBRACE;
    if (!this.objectSeen[g]) return this.skip(buf, i, end, 1);
    return this.members(buf, i + 1, end, g);
  }

  /** A header object's member: name m's value, or skipped. */
  private headerMember(buf: Buffer, i: number, end: number, g: number, m: number): number {
    if (m === NOT_KEPT) return this.skip(buf, i, end, 2);
    const k = (this.headerBase[g] as number) + m;
    // A name given twice (in any case) is combined by the JSON.parse path.
    if (this.values[k] !== undefined) return FAIL;
    return this.value(buf, i, end, k);
  }

  /** Skips (and validates) any JSON value. */
  private skip(buf: Buffer, i: number, end: number, depth: number): number {
    if (i >= end) return FAIL;
    const b = buf[i] as number;
    if (b === QUOTE) return skipStringFrom(buf, i + 1, end);
    if (b === LBRACE || b === LBRACKET) {
      if (depth > MAX_DEPTH) return FAIL;
      const isObject = b === LBRACE;
      const close = isObject ? RBRACE : RBRACKET;
      i = ws(buf, i + 1, end);
      if (i < end && buf[i] === close) return i + 1;
      for (;;) {
        if (isObject) {
          if (i >= end || buf[i] !== QUOTE) return FAIL;
          i = skipStringFrom(buf, i + 1, end);
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
    if (b === MINUS || (b >= ZERO && b <= NINE)) return this.numberAt(buf, i, end);
    return literalEnd(buf, i, end);
  }

  /** A JSON number from i; its value in this.number. Returns the index after it. */
  private numberAt(buf: Buffer, i: number, end: number): number {
    const from = i;
    const negative = buf[i] === MINUS;
    if (negative) i++;
    let mantissa = 0;
    let digits = 0;
    let fraction = 0;
    let b = i < end ? (buf[i] as number) : -1;
    if (b === ZERO) {
      b = ++i < end ? (buf[i] as number) : -1;
    } else if (b > ZERO && b <= NINE) {
      do {
        mantissa = mantissa * 10 + (b - ZERO);
        digits++;
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
        digits++;
        fraction++;
        b = ++i < end ? (buf[i] as number) : -1;
      } while (b >= ZERO && b <= NINE);
    }
    let exact = digits <= MAX_FAST_DIGITS && fraction < POW10.length;
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

/** Skips JSON whitespace. */
function ws(buf: Uint8Array, i: number, end: number): number {
  while (i < end) {
    const b = buf[i];
    if (b !== 0x20 && b !== 0x09 && b !== 0x0d && b !== 0x0a) break;
    i++;
  }
  return i;
}

/**
 * From just inside a string's opening quote: the index of its closing quote, or of the first byte that is
 * not plain printable ASCII (a backslash, or ≥ 0x80), or FAIL at a control byte or the end of the line.
 */
function plainStringEnd(buf: Uint8Array, i: number, end: number): number {
  while (i < end) {
    const b = buf[i] as number;
    // One table load per byte: this loop reads most of every line.
    if (STRING_STOP[b] !== 0) return b < 0x20 ? FAIL : i;
    i++;
  }
  return FAIL;
}

/** Bytes that end a plain ASCII run inside a string: controls, the quote, the backslash, and ≥ 0x80. */
const STRING_STOP = Uint8Array.from({ length: 256 }, (_, b) => (b < 0x20 || b === QUOTE || b === BACKSLASH || b >= 0x80 ? 1 : 0));

/**
 * Skips the rest of a string that is not kept, from any byte inside it; returns the index after its closing
 * quote. Bytes ≥ 0x80 pass as they are: decoding never turns them into a quote or a backslash.
 */
function skipStringFrom(buf: Uint8Array, i: number, end: number): number {
  while (i < end) {
    const b = buf[i] as number;
    if (b === QUOTE) return i + 1;
    if (b < 0x20) return FAIL;
    if (b === BACKSLASH) {
      const e = buf[i + 1];
      if (e === 0x75 /* u */) {
        for (let h = i + 2; h < i + 6; h++) if (h >= end || !isHex(buf[h] as number)) return FAIL;
        i += 6;
        continue;
      }
      // " \ / b f n r t
      if (i + 1 >= end || !(e === QUOTE || e === BACKSLASH || e === 0x2f || e === 0x62 || e === 0x66 || e === 0x6e || e === 0x72 || e === 0x74)) return FAIL;
      i += 2;
      continue;
    }
    i++;
  }
  return FAIL;
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

/** The entry of key bytes [s, e) in the table; `fold`: ASCII letters match in any case. */
function lookup(table: KeyTable, buf: Uint8Array, s: number, e: number, fold: boolean): KeyEntry | undefined {
  const candidates = table[e - s];
  if (candidates === undefined) return undefined;
  for (const entry of candidates) {
    const bytes = entry.bytes;
    let j = 0;
    const len = bytes.length;
    if (fold) {
      while (j < len) {
        const b = buf[s + j] as number;
        if ((b >= 0x41 && b <= 0x5a ? b + 0x20 : b) !== bytes[j]) break;
        j++;
      }
    } else {
      while (j < len && buf[s + j] === bytes[j]) j++;
    }
    if (j === len) return entry;
  }
  return undefined;
}
