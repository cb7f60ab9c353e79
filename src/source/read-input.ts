import { closeSync, constants, createReadStream, openSync, type Stats } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import type { LineSink } from './line-sink.js';
import { LineSplitter } from './line-splitter.js';

const READ_HIGH_WATER_MARK = 1 << 20;

export interface ReadInputOptions {
  maxLineBytes: number;
  /** Stops the read (between chunks) when aborted: the read rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * Reads a whole input to its end, delivering its lines: a file, stdin when path is '-', or anything else
 * that can be opened and read in order (a pipe, a FIFO, /dev/stdin, process substitution's /dev/fd/N).
 * Gzip is recognised by its magic bytes, not the file name, so rotated logs compressed under any name
 * read the same as plain ones. Every error names the input.
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
  const opened = await openInput(path, opts.signal);
  if (!isFileHandle(opened)) {
    await readInputStream(opened, opts, sink, source, path);
    return;
  }
  const fh = opened;
  try {
    opts.signal?.throwIfAborted();
    const kind = await kindOf(fh, path);
    if (kind === 'stream') {
      // Not seekable: read in order, as a stream (positional reads fail with ESPIPE on a pipe).
      const stream = fh.createReadStream({ highWaterMark: READ_HIGH_WATER_MARK, autoClose: false });
      await readInputStream(stream, opts, sink, source, path);
      return;
    }
    const head = Buffer.alloc(2);
    let bytesRead: number;
    try {
      ({ bytesRead } = await fh.read(head, 0, 2, 0));
    } catch (err) {
      throw new Error(`cannot read input ${path}: ${messageOf(err)}`, { cause: err });
    }
    if (isGzip(head.subarray(0, bytesRead))) {
      const stream = fh.createReadStream({ highWaterMark: READ_HIGH_WATER_MARK, autoClose: false, start: 0 });
      await readInputStream(stream, opts, sink, source, path);
      return;
    }
    const splitter = new LineSplitter(opts.maxLineBytes, sink, source);
    await readPlain(fh, 0, undefined, splitter, path, opts.signal);
    splitter.flush();
  } finally {
    await fh.close();
  }
}

/** How an opened input is read: by position (a regular file), or in order (a pipe, FIFO, character device, socket). */
export async function kindOf(fh: FileHandle, path: string): Promise<'file' | 'stream'> {
  let st: Stats;
  try {
    st = await fh.stat();
  } catch (err) {
    throw new Error(`cannot read input ${path}: ${messageOf(err)}`, { cause: err });
  }
  if (st.isDirectory()) throw new Error(`cannot read input ${path}: EISDIR: it is a directory, not a log file`);
  return st.isFile() ? 'file' : 'stream';
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
    const fh = await openInput(path, opts.signal);
    if (!isFileHandle(fh)) throw new Error(`cannot read input ${path}: not a file that can be read in parts`);
    try {
      await readPlain(fh, start, end, splitter, path, opts.signal);
    } finally {
      await fh.close();
    }
  }
  splitter.flush();
}

/**
 * Plain bytes [start, end) of an open file into the splitter, through one read buffer reused for the whole
 * file (and the next). A stream hands out a new 1 MiB buffer per chunk; the ones that outlive two young-generation
 * collections are only freed by a full one, and they held the peak RSS of `report` up by tens of MiB.
 */
async function readPlain(fh: FileHandle, start: number, end: number | undefined, splitter: LineSplitter, path: string, signal?: AbortSignal): Promise<void> {
  // The buffer of the file read before, when none is being read: 30 files in one report are one buffer, not 30.
  const buf = spareBuffer ?? Buffer.allocUnsafe(READ_HIGH_WATER_MARK);
  spareBuffer = undefined;
  try {
    await readPlainInto(buf, fh, start, end, splitter, path, signal);
  } finally {
    spareBuffer = buf;
  }
}

let spareBuffer: Buffer | undefined;

async function readPlainInto(buf: Buffer, fh: FileHandle, start: number, end: number | undefined, splitter: LineSplitter, path: string, signal?: AbortSignal): Promise<void> {
  let at = start;
  signal?.throwIfAborted();
  try {
    for (;;) {
      if (signal?.aborted) break;
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
  signal?.throwIfAborted();
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
  const signal = opts.signal;
  const consume = async (chunks: AsyncIterable<Buffer>): Promise<void> => {
    for await (const chunk of chunks) {
      signal?.throwIfAborted();
      splitter.push(chunk);
    }
  };
  // An abort ends a read waiting for a pipe's next bytes at once, not at the next chunk.
  const onAbort = () => input.destroy();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    signal?.throwIfAborted();
    const { head, rest } = await sniff(input as AsyncIterable<Buffer>);
    if (isGzip(head)) await pipeline(rest, createGunzip(), consume);
    else await consume(rest);
  } catch (err) {
    if (signal?.aborted) throw signal.reason;
    throw new Error(`cannot read input ${label}: ${messageOf(err)}`, { cause: err });
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  splitter.flush();
}

/** Reads enough of the stream to see the magic bytes, then replays it whole. */
export async function sniff(input: AsyncIterable<Buffer>): Promise<{ head: Buffer; rest: AsyncGenerator<Buffer> }> {
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

export function isFileHandle(x: FileHandle | Readable): x is FileHandle {
  return !(x instanceof Readable);
}

export function isGzip(head: Buffer): boolean {
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
}

/** Rejects with the signal's reason once it is aborted. */
export function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Opens an input for reading; the error names the path. Opening a FIFO waits (in the thread pool, where it
 * cannot be cancelled) until a writer opens it; an abort meanwhile lets it go by opening the FIFO for
 * writing, without blocking, and closing it at once, until the open completes (with nothing to read):
 * a thread stuck in open() would keep even process.exit waiting. A descriptor path to a socket
 * (`/dev/stdin` when stdin is a socket pair, as child processes often get) cannot be opened again; its
 * descriptor is read as it is.
 */
export async function openInput(path: string, signal?: AbortSignal): Promise<FileHandle | Readable> {
  signal?.throwIfAborted();
  const fifo = (await stat(path).catch(() => undefined))?.isFIFO() === true;
  signal?.throwIfAborted();
  let releasing: NodeJS.Timeout | undefined;
  const release = () => {
    try {
      closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // No reader waiting yet or any more (ENXIO): tried again until the open is done.
    }
  };
  const onAbort = () => {
    release();
    releasing = setInterval(release, 20);
  };
  if (fifo) signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await open(path, 'r');
  } catch (err) {
    const fd = descriptorOf(path);
    if ((err as NodeJS.ErrnoException).code === 'ENXIO' && fd !== undefined) {
      return fd === 0 ? process.stdin : createReadStream('', { fd, autoClose: false, highWaterMark: READ_HIGH_WATER_MARK });
    }
    throw new Error(`cannot open input ${path}: ${messageOf(err)}`, { cause: err });
  } finally {
    clearInterval(releasing);
    if (fifo) signal?.removeEventListener('abort', onAbort);
  }
}

/** The descriptor a path names (`/dev/stdin`, `/dev/fd/N`, `/proc/self/fd/N`), if it names one. */
function descriptorOf(path: string): number | undefined {
  if (path === '/dev/stdin') return 0;
  const m = /^\/(?:dev\/fd|proc\/self\/fd)\/(\d+)$/.exec(path);
  return m === null ? undefined : Number(m[1]);
}
