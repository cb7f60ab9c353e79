import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../../src/source/line-splitter.js';
import type { LineSink } from '../../../src/source/line-sink.js';

class Recorder implements LineSink {
  lines: string[] = [];
  oversizes = 0;
  line(text: string, source: string): void {
    expect(source).toBe('src');
    this.lines.push(text);
  }
  oversize(source: string): void {
    expect(source).toBe('src');
    this.oversizes++;
  }
}

function splitAll(input: Buffer, chunkSize: number, max = 1024): { rec: Recorder; maxPending: number } {
  const rec = new Recorder();
  const s = new LineSplitter(max, rec, 'src');
  let maxPending = 0;
  for (let i = 0; i < input.length; i += chunkSize) {
    s.push(input.subarray(i, i + chunkSize));
    maxPending = Math.max(maxPending, s.pendingBytes);
  }
  s.flush();
  return { rec, maxPending };
}

describe('LineSplitter', () => {
  const text = 'first\nsecond line\r\n\n\r\nthird: é 日本 😀\nlast without newline';
  const expected = ['first', 'second line', 'third: é 日本 😀', 'last without newline'];

  it('splits on LF, strips CR, skips empty lines, flushes the unterminated tail', () => {
    expect(splitAll(Buffer.from(text), 1 << 20).rec.lines).toEqual(expected);
  });

  it('gives the same lines at every chunk size, including a byte at a time (multibyte chars split)', () => {
    const input = Buffer.from(text);
    for (let size = 1; size <= input.length; size++) {
      const { rec } = splitAll(input, size);
      expect(rec.lines, `chunk size ${size}`).toEqual(expected);
      expect(rec.oversizes).toBe(0);
    }
  });

  it('holds a partial line until its newline arrives', () => {
    const rec = new Recorder();
    const s = new LineSplitter(100, rec, 'src');
    s.push(Buffer.from('abc'));
    expect(rec.lines).toEqual([]);
    expect(s.pendingBytes).toBe(3);
    s.push(Buffer.from('def\ngh'));
    expect(rec.lines).toEqual(['abcdef']);
    expect(s.pendingBytes).toBe(2);
  });

  it('drops an oversize line once, keeps its neighbours, at every chunk boundary', () => {
    const max = 16;
    const long = 'x'.repeat(50);
    const input = Buffer.from(`before\n${long}\nafter\n${'y'.repeat(17)}\nend`);
    for (let size = 1; size <= input.length; size++) {
      const { rec, maxPending } = splitAll(input, size, max);
      expect(rec.lines, `chunk size ${size}`).toEqual(['before', 'after', 'end']);
      expect(rec.oversizes, `chunk size ${size}`).toBe(2);
      expect(maxPending).toBeLessThanOrEqual(max + 1);
    }
  });

  it('stops buffering as soon as the limit is crossed, across many chunks', () => {
    const rec = new Recorder();
    const max = 64;
    const s = new LineSplitter(max, rec, 'src');
    s.push(Buffer.from('ok\n' + 'z'.repeat(40)));
    for (let i = 0; i < 1000; i++) {
      s.push(Buffer.alloc(100, 'z'));
      expect(s.pendingBytes).toBeLessThanOrEqual(max + 100);
    }
    expect(s.pendingBytes).toBe(0);
    expect(rec.oversizes).toBe(1);
    s.push(Buffer.from('zzz\nnext\n'));
    expect(rec.lines).toEqual(['ok', 'next']);
    expect(rec.oversizes).toBe(1);
  });

  it('accepts a line of exactly the limit, with LF or CRLF, and rejects one byte more', () => {
    const max = 8;
    const input = Buffer.from(`${'a'.repeat(8)}\r\n${'b'.repeat(8)}\n${'c'.repeat(9)}\r\n${'d'.repeat(9)}\n${'e'.repeat(8)}\r`);
    for (let size = 1; size <= input.length; size++) {
      const { rec } = splitAll(input, size, max);
      expect(rec.lines, `chunk size ${size}`).toEqual(['a'.repeat(8), 'b'.repeat(8), 'e'.repeat(8)]);
      expect(rec.oversizes).toBe(2);
    }
  });

  it('does not emit an oversize line on flush and reports it once', () => {
    const rec = new Recorder();
    const s = new LineSplitter(4, rec, 'src');
    s.push(Buffer.from('123456'));
    s.flush();
    s.flush();
    expect(rec.lines).toEqual([]);
    expect(rec.oversizes).toBe(1);
  });
});
