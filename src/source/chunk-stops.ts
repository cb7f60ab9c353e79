// Where a chunk's strings may end: one bit per byte for the quote, the backslash and the control bytes
// (`ends`), and one with the bytes ≥ 0x80 too (`plainEnds`), made 16 bytes at a time by a WebAssembly SIMD
// loop. The byte scan (record/scan-record.ts) then finds a string's end by the next set bit, a few
// operations per 32 bytes, instead of testing each 4-byte word in JavaScript: most of a gateway line's
// bytes are inside strings. The line splitter offers a chunk while its lines are read (its bytes do not
// change then); the scan maps a window of it on first use and answers from the map only inside it.

/** Bytes mapped at once: a chunk is mapped window by window, as its lines are read. */
export const WINDOW_BYTES = 256 * 1024;
const PAGE = 64 * 1024;
/** Layout of the module's memory: the window's bytes (and slack for the last 16-byte load, 4-aligned), then the two maps. */
const ENDS_AT = WINDOW_BYTES + 32;
const PLAIN_ENDS_AT = ENDS_AT + WINDOW_BYTES / 8;
const PAGES = Math.ceil((PLAIN_ENDS_AT + WINDOW_BYTES / 8) / PAGE);

/**
 * The module, assembled here (no toolchain, no binary in the tree): one function classify(len) over
 * memory[0, len), writing i8x16.bitmask of (b == '"' | b == '\\' | b < 0x20) at ENDS_AT and of that or
 * b ≥ 0x80 at PLAIN_ENDS_AT, two bytes per 16 input bytes.
 */
function moduleBytes(): Uint8Array {
  const u32 = (n: number): number[] => {
    const out: number[] = [];
    do {
      let b = n & 0x7f;
      n >>>= 7;
      if (n !== 0) b |= 0x80;
      out.push(b);
    } while (n !== 0);
    return out;
  };
  const i32const = (n: number): number[] => {
    // i32.const, then the signed LEB128 of a non-negative value below 2^31.
    const out: number[] = [0x41];
    for (;;) {
      const b = n & 0x7f;
      n >>= 7;
      if (n === 0 && (b & 0x40) === 0) {
        out.push(b);
        return out;
      }
      out.push(b | 0x80);
    }
  };
  const simd = (op: number): number[] => [0xfd, ...u32(op)];
  const splat = (byte: number): number[] => [...simd(0x0c), ...new Array<number>(16).fill(byte)];
  const section = (id: number, body: number[]): number[] => [id, ...u32(body.length), ...body];
  const LEN = 0;
  const I = 1;
  const V = 2;
  const A = 3;
  const get = (l: number) => [0x20, l];
  const set = (l: number) => [0x21, l];
  const tee = (l: number) => [0x22, l];
  // store16 at BASE + i / 8 of the value on the stack is written as: address first, then the value.
  const mapAddress = (base: number) => [...i32const(base), ...get(I), ...i32const(3), 0x76 /* i32.shr_u */, 0x6a /* i32.add */];
  // prettier-ignore
  const body = [
    // locals: i i32; v, a v128
    0x02, 0x01, 0x7f, 0x02, 0x7b,
    0x02, 0x40, // block
    0x03, 0x40, // loop
    ...get(I), ...get(LEN), 0x4f /* i32.ge_u */, 0x0d, 0x01, // br_if 1
    ...get(I), ...simd(0x00), 0x00, 0x00, ...set(V), // v128.load align 0 offset 0
    ...mapAddress(ENDS_AT),
    ...get(V), ...splat(0x22), ...simd(0x23) /* i8x16.eq */,
    ...get(V), ...splat(0x5c), ...simd(0x23), ...simd(0x50) /* v128.or */,
    ...get(V), ...splat(0x20), ...simd(0x26) /* i8x16.lt_u */, ...simd(0x50),
    ...tee(A), ...simd(0x64) /* i8x16.bitmask */, 0x3b, 0x01, 0x00, // i32.store16 align 1 offset 0
    ...mapAddress(PLAIN_ENDS_AT),
    ...get(A), ...get(V), ...splat(0x00), ...simd(0x25) /* i8x16.lt_s: ≥ 0x80 */, ...simd(0x50),
    ...simd(0x64), 0x3b, 0x01, 0x00,
    ...get(I), ...i32const(16), 0x6a, ...set(I),
    0x0c, 0x00, // br 0
    0x0b, // end loop
    0x0b, // end block
    0x0b, // end function
  ];
  const name = [...'classify'].map((c) => c.charCodeAt(0));
  // prettier-ignore
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [0x01, 0x60, 0x01, 0x7f, 0x00]), // type: (i32) -> ()
    ...section(3, [0x01, 0x00]), // function 0 of type 0
    ...section(5, [0x01, 0x00, ...u32(PAGES)]), // memory, min PAGES
    ...section(7, [0x02, ...u32(name.length), ...name, 0x00, 0x00, 0x06, ...[...'memory'].map((c) => c.charCodeAt(0)), 0x02, 0x00]),
    ...section(10, [0x01, ...u32(body.length), ...body]),
  ]);
}

/** The part of the WebAssembly global used here (lib ES2023 and @types/node do not declare it). */
declare const WebAssembly: {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Record<string, unknown> };
};

interface Classifier {
  classify(len: number): void;
  bytes: Uint8Array;
  ends: Int32Array;
  plainEnds: Int32Array;
}

function instantiate(): Classifier | undefined {
  try {
    const instance = new WebAssembly.Instance(new WebAssembly.Module(moduleBytes()));
    const memory = instance.exports.memory as { buffer: ArrayBuffer };
    return {
      classify: instance.exports.classify as (len: number) => void,
      bytes: new Uint8Array(memory.buffer, 0, WINDOW_BYTES),
      ends: new Int32Array(memory.buffer, ENDS_AT, WINDOW_BYTES / 32),
      plainEnds: new Int32Array(memory.buffer, PLAIN_ENDS_AT, WINDOW_BYTES / 32),
    };
  } catch {
    // A runtime without WebAssembly SIMD: every string is scanned word by word, as before the map.
    return undefined;
  }
}

/**
 * The map of the chunk being read. `buf` is the mapped buffer (undefined: none), and [base, limit) the
 * mapped window of it; bit j of word w of `ends` is byte base + 32w + j.
 */
export class ChunkStops {
  buf: Uint8Array | undefined;
  base = 0;
  limit = 0;
  readonly ends: Int32Array;
  readonly plainEnds: Int32Array;
  /** The buffer whose bytes do not change until withdrawn: only it is ever mapped. */
  private offered: Uint8Array | undefined;

  constructor(private readonly classifier: Classifier | undefined = instantiate()) {
    this.ends = classifier?.ends ?? new Int32Array(0);
    this.plainEnds = classifier?.plainEnds ?? new Int32Array(0);
  }

  /** buf's bytes stay as they are until withdraw(); returns what withdraw() puts back. */
  offer(buf: Uint8Array): Uint8Array | undefined {
    const before = this.offered;
    this.offered = buf;
    return before;
  }

  withdraw(before: Uint8Array | undefined): void {
    this.offered = before;
    this.buf = undefined;
  }

  /**
   * Makes [start, end) of buf mapped when buf is the offered buffer and the range fits a window; whether it
   * is mapped now.
   */
  cover(buf: Uint8Array, start: number, end: number): boolean {
    if (buf === this.buf && start >= this.base && end <= this.limit) return true;
    const c = this.classifier;
    if (c === undefined || buf !== this.offered || end - start > WINDOW_BYTES - 32) {
      this.buf = undefined;
      return false;
    }
    // Aligned down to 32, so a word of the map is a word of the buffer's positions (not `& ~31`: a
    // position past 2^31 would turn negative).
    const base = start - (start % 32);
    const limit = Math.min(buf.length, base + WINDOW_BYTES);
    c.bytes.set(buf.subarray(base, limit));
    c.classify(limit - base);
    this.buf = buf;
    this.base = base;
    this.limit = limit;
    return true;
  }
}

/** The one map: lines are read one at a time, on each thread. */
export const chunkStops = new ChunkStops();
