import { open, type FileHandle } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { LineSink } from './line-sink.js';
import { LineSplitter } from './line-splitter.js';

const READ_HIGH_WATER_MARK = 1 << 20;

export interface ReadInputOptions {
  maxLineBytes: number;
}

/**
 * Reads a whole file (or stdin when path is '-') to its end, delivering its lines.
 * Gzip is recognised by its magic bytes, not the file name, so rotated logs
 * compressed under any name read the same as plain ones.
 */
export async function readInput(
  path: string,
  opts: ReadInputOptions,
  sink: LineSink,
  source: string = path === '-' ? 'stdin' : path,
): Promise<void> {
  if (path === '-') {
    await readInputStream(process.stdin, opts, sink, source, 'stdin');
    return;
  }
  const fh = await openInput(path);
  try {
    const head = Buffer.alloc(2);
    const { bytesRead } = await fh.read(head, 0, 2, 0);
    if (isGzip(head.subarray(0, bytesRead))) {
      const stream = fh.createReadStream({ highWaterMark: READ_HIGH_WATER_MARK, autoClose: false });
      await readInputStream(stream, opts, sink, source, path);
      return;
    }
    const splitter = new LineSplitter(opts.maxLineBytes, sink, source);
    await readPlain(fh, 0, undefined, splitter, path);
    splitter.flush();
  } finally {
    await fh.close();
  }
}

/**
 * Reads the plain (never gzip) bytes of a file from `start` (a line's first byte) to `end` (exclusive; to
 * its end when undefined), delivering their lines: one part of a file that `report` reads on two threads.
 */
export async function readFileRange(
  path: string,
  start: number,
  end: number | undefined,
  opts: ReadInputOptions,
  sink: LineSink,
  source: string = path,
): Promise<void> {
  const splitter = new LineSplitter(opts.maxLineBytes, sink, source);
  if (end === undefined || end > start) {
    const fh = await openInput(path);
    try {
      await readPlain(fh, start, end, splitter, path);
    } finally {
      await fh.close();
    }
  }
  splitter.flush();
}

/**
 * Plain bytes [start, end) of an open file into the splitter, through one read buffer reused for the whole
 * file. A stream hands out a new 1 MiB buffer per chunk; the ones that outlive two young-generation
 * collections are only freed by a full one, and they held the peak RSS of `report` up by tens of MiB.
 */
async function readPlain(fh: FileHandle, start: number, end: number | undefined, splitter: LineSplitter, path: string): Promise<void> {
  const buf = Buffer.allocUnsafe(READ_HIGH_WATER_MARK);
  let at = start;
  try {
    for (;;) {
      const want = end === undefined ? buf.length : Math.min(buf.length, end - at);
      if (want <= 0) return;
      const { bytesRead } = await fh.read(buf, 0, want, at);
      if (bytesRead === 0) return;
      at += bytesRead;
      splitter.push(bytesRead === buf.length ? buf : buf.subarray(0, bytesRead));
    }
  } catch (err) {
    throw new Error(`cannot read input ${path}: ${messageOf(err)}`, { cause: err });
  }
}

/** The stream half of readInput: lines of a plain or gzip byte stream, flushed at its end. */
export async function readInputStream(
  input: Readable,
  opts: ReadInputOptions,
  sink: LineSink,
  source: string,
  label: string = source,
): Promise<void> {
  const splitter = new LineSplitter(opts.maxLineBytes, sink, source);
  const consume = async (chunks: AsyncIterable<Buffer>): Promise<void> => {
    for await (const chunk of chunks) splitter.push(chunk);
  };
  try {
    const { head, rest } = await sniff(input as AsyncIterable<Buffer>);
    if (isGzip(head)) await pipeline(rest, createGunzip(), consume);
    else await consume(rest);
  } catch (err) {
    throw new Error(`cannot read input ${label}: ${messageOf(err)}`, { cause: err });
  }
  splitter.flush();
}

/** Reads enough of the stream to see the magic bytes, then replays it whole. */
async function sniff(input: AsyncIterable<Buffer>): Promise<{ head: Buffer; rest: AsyncGenerator<Buffer> }> {
  const it = input[Symbol.asyncIterator]();
  let head: Buffer = Buffer.alloc(0);
  let ended = false;
  while (head.length < 2) {
    const r = await it.next();
    if (r.done) {
      ended = true;
      break;
    }
    head = head.length === 0 ? r.value : Buffer.concat([head, r.value]);
  }
  async function* replay(): AsyncGenerator<Buffer> {
    try {
      if (head.length > 0) yield head;
      if (ended) return;
      for (let r = await it.next(); !r.done; r = await it.next()) yield r.value;
    } finally {
      // Releases the underlying stream if the consumer stopped early (e.g. bad gzip).
      await it.return?.();
    }
  }
  return { head, rest: replay() };
}

function isGzip(head: Buffer): boolean {
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Opens an input for reading; the error names the path. */
async function openInput(path: string): Promise<FileHandle> {
  try {
    return await open(path, 'r');
  } catch (err) {
    throw new Error(`cannot open input ${path}: ${messageOf(err)}`, { cause: err });
  }
}
