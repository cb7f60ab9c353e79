import { getEventListeners } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LineSink } from '../../../src/source/line-sink.js';
import { openChunks } from '../../../src/source/chunk-reader.js';
import { readInput, readInputStream } from '../../../src/source/read-input.js';

class Recorder implements LineSink {
  lines: string[] = [];
  sources = new Set<string>();
  oversizes = 0;
  line(text: string, source: string): void {
    this.lines.push(text);
    this.sources.add(source);
  }
  oversize(): void {
    this.oversizes++;
  }
}

const opts = { maxLineBytes: 4096 };
const numbered = (n: number): string[] => Array.from({ length: n }, (_, i) => `{"seq":${i + 1},"msg":"héllo"}`);

describe('readInput', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'zpe-read-input-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads every line of a plain file, labelled with the path by default', async () => {
    const path = join(dir, 'plain.log');
    await writeFile(path, numbered(3).join('\n') + '\n');
    const rec = new Recorder();
    await readInput(path, opts, rec);
    expect(rec.lines).toEqual(numbered(3));
    expect([...rec.sources]).toEqual([path]);
  });

  it('uses the given source label', async () => {
    const path = join(dir, 'plain.log');
    await writeFile(path, 'a\n');
    const rec = new Recorder();
    await readInput(path, opts, rec, 'logs/*.log');
    expect([...rec.sources]).toEqual(['logs/*.log']);
  });

  it('delivers a last line that has no trailing newline', async () => {
    const path = join(dir, 'tail.log');
    await writeFile(path, 'one\ntwo');
    const rec = new Recorder();
    await readInput(path, opts, rec);
    expect(rec.lines).toEqual(['one', 'two']);
  });

  it.each(['rotated.log.gz', 'rotated.log.1'])('decompresses gzip by magic bytes (%s), across many chunks', async (name) => {
    const lines = numbered(100_000);
    const path = join(dir, name);
    await writeFile(path, gzipSync(lines.join('\n') + '\n'));
    const rec = new Recorder();
    await readInput(path, opts, rec);
    expect(rec.lines.length).toBe(lines.length);
    expect(rec.lines).toEqual(lines);
  });

  it('given a stop signal, a gzip input of many chunks leaves no abort listener behind per chunk', async () => {
    const lines = numbered(100_000);
    const path = join(dir, 'many-chunks.gz');
    await writeFile(path, gzipSync(lines.join('\n') + '\n'));
    const signal = new AbortController().signal;
    const reader = await openChunks(path, undefined, signal);
    let chunks = 0;
    while ((await reader.next()) !== undefined) chunks++;
    await reader.close();
    expect(chunks).toBeGreaterThan(10);
    // Each read once added one (and with it the chunk it resolved to stayed reachable).
    expect(getEventListeners(signal, 'abort').length).toBeLessThanOrEqual(1);
  });

  it('readInput with a stop signal leaves no abort listener behind either (it reads through chunk-reader)', async () => {
    const lines = numbered(100_000);
    const path = join(dir, 'many-chunks-read.gz');
    await writeFile(path, gzipSync(lines.join('\n') + '\n'));
    const signal = new AbortController().signal;
    const rec = new Recorder();
    await readInput(path, { ...opts, signal }, rec);
    expect(rec.lines).toEqual(lines);
    expect(getEventListeners(signal, 'abort').length).toBeLessThanOrEqual(1);
  });

  it('reads a plain file named .gz as plain text', async () => {
    const path = join(dir, 'misnamed.gz');
    await writeFile(path, 'not\ncompressed\n');
    const rec = new Recorder();
    await readInput(path, opts, rec);
    expect(rec.lines).toEqual(['not', 'compressed']);
  });

  it('reads an empty file and a one-byte file', async () => {
    const empty = join(dir, 'empty.log');
    const one = join(dir, 'one.log');
    await writeFile(empty, '');
    await writeFile(one, 'x');
    const rec = new Recorder();
    await readInput(empty, opts, rec);
    await readInput(one, opts, rec);
    expect(rec.lines).toEqual(['x']);
  });

  it('drops oversize lines and reports them', async () => {
    const path = join(dir, 'big.log');
    await writeFile(path, `a\n${'x'.repeat(10_000)}\nb\n`);
    const rec = new Recorder();
    await readInput(path, { maxLineBytes: 100 }, rec);
    expect(rec.lines).toEqual(['a', 'b']);
    expect(rec.oversizes).toBe(1);
  });

  it('rejects with the path in the message when the file is missing', async () => {
    const path = join(dir, 'missing.log');
    await expect(readInput(path, opts, new Recorder())).rejects.toThrow(path);
  });

  it('rejects with the path in the message on corrupt gzip', async () => {
    const path = join(dir, 'corrupt.gz');
    const gz = gzipSync('some\nlines\n'.repeat(1000));
    await writeFile(path, gz.subarray(0, gz.length / 2));
    await expect(readInput(path, opts, new Recorder())).rejects.toThrow(path);
  });
});

describe('readInputStream', () => {
  it('detects gzip even when the magic bytes arrive in separate chunks', async () => {
    const gz = gzipSync('x\ny\n');
    const chunks = [gz.subarray(0, 1), gz.subarray(1, 2), gz.subarray(2)];
    const rec = new Recorder();
    await readInputStream(Readable.from(chunks), opts, rec, 'stdin');
    expect(rec.lines).toEqual(['x', 'y']);
    expect([...rec.sources]).toEqual(['stdin']);
  });

  it('reads a plain stream whose first chunk is a single byte', async () => {
    const rec = new Recorder();
    await readInputStream(Readable.from([Buffer.from('a'), Buffer.from('b\nc')]), opts, rec, 'stdin');
    expect(rec.lines).toEqual(['ab', 'c']);
  });
});
