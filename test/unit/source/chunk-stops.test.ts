// The chunk map (source/chunk-stops.ts) is what the byte scan finds strings' ends by: every bit must be
// the byte's class, in every window, and a buffer never offered (or withdrawn) is never answered from it.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChunkStops, WINDOW_BYTES } from '../../../src/source/chunk-stops.js';

const BYTES = [0x22, 0x5c, 0x00, 0x01, 0x1f, 0x20, 0x21, 0x7e, 0x7f, 0x80, 0xbf, 0xc3, 0xff, 0x41];

function bit(map: Int32Array, rel: number): number {
  return ((map[rel >> 5] as number) >>> (rel & 31)) & 1;
}

/** Every mapped byte's two bits against its class (one assertion per window); returns the positions checked. */
function checkWindow(stops: ChunkStops, buf: Uint8Array): number {
  const wrong: string[] = [];
  for (let i = stops.base; i < stops.limit && wrong.length < 5; i++) {
    const b = buf[i] as number;
    const end = b === 0x22 || b === 0x5c || b < 0x20 ? 1 : 0;
    const plainEnd = end | (b >= 0x80 ? 1 : 0);
    if (bit(stops.ends, i - stops.base) !== end || bit(stops.plainEnds, i - stops.base) !== plainEnd) wrong.push(`byte ${b} at ${i}`);
  }
  expect(wrong).toEqual([]);
  return stops.limit - stops.base;
}

describe('chunk stops', () => {
  const stops = new ChunkStops();

  it('maps the quote, the backslash and control bytes, and with them bytes ≥ 0x80, bit for bit', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.constantFrom(...BYTES), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 3000 }), fc.nat(), (bytes, at) => {
        const buf = Uint8Array.from(bytes);
        const start = at % buf.length;
        const before = stops.offer(buf);
        try {
          expect(stops.cover(buf, start, buf.length)).toBe(true);
          expect(stops.base).toBe(start - (start % 32));
          expect(stops.limit).toBe(buf.length);
          checkWindow(stops, buf);
        } finally {
          stops.withdraw(before);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('maps a chunk window by window as its lines go, each window exactly', () => {
    const buf = new Uint8Array(WINDOW_BYTES * 2 + 1000);
    for (let i = 0; i < buf.length; i++) buf[i] = BYTES[(i * 7919) % BYTES.length] as number;
    const before = stops.offer(buf);
    try {
      let checked = 0;
      for (const start of [0, 1000, WINDOW_BYTES - 100, WINDOW_BYTES + 5, 2 * WINDOW_BYTES]) {
        expect(stops.cover(buf, start, start + 400)).toBe(true);
        expect(stops.base <= start && start + 400 <= stops.limit).toBe(true);
        checked += checkWindow(stops, buf);
      }
      expect(checked).toBeGreaterThan(2 * WINDOW_BYTES);
    } finally {
      stops.withdraw(before);
    }
  });

  it('answers only for the buffer offered, while it is offered, and for ranges that fit a window', () => {
    const buf = Buffer.from('{"a":"b"}\n'.repeat(100));
    const other = Buffer.from(buf);
    expect(stops.cover(buf, 0, 10)).toBe(false);
    const before = stops.offer(buf);
    expect(stops.cover(other, 0, 10)).toBe(false);
    expect(stops.cover(buf, 0, 10)).toBe(true);
    const long = new Uint8Array(WINDOW_BYTES + 64);
    const inner = stops.offer(long);
    expect(stops.cover(long, 0, long.length)).toBe(false);
    stops.withdraw(inner);
    // The outer offer is back, its map made again on first use.
    expect(stops.buf).toBeUndefined();
    expect(stops.cover(buf, 0, 10)).toBe(true);
    stops.withdraw(before);
    expect(stops.buf).toBeUndefined();
    expect(stops.cover(buf, 0, 10)).toBe(false);
  });
});
