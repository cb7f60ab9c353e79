// Any input read one chunk at a time, when the reader asks for it: a file (plain or gzip), stdin, or
// anything else that can be opened and read in order (a pipe, a FIFO, /dev/stdin, process substitution's
// /dev/fd/N). gzip is recognised by its magic bytes, not the file name. readInput (read-input.ts) pulls
// every chunk of one input; the replay of old logs (src/history) interleaves many inputs by their records'
// time, pulling from whichever is behind. Every error names the input.
import { closeSync, constants, createReadStream, openSync, type Stats } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { pipeline, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { raceAbort } from './abort-race.js';
import { errorMessage } from './fs-error-reason.js';

export interface ChunkReader {
  /** The next bytes, valid until the next call (a plain file's are read into one shared buffer); undefined at the end. */
  next(): Promise<Buffer | undefined>;
  close(): Promise<void>;
}

export const CHUNK_BYTES = 1 << 20;

/**
 * A reader of `path` ('-' for stdin). A plain regular file is read by position into `buffer`, which
 * readers may share because each chunk is used up before the next read; anything else as a stream.
 * `interrupt` aborted ends a read waiting on a pipe at once (next() rejects with its reason), and lets go
 * of a FIFO whose open() still waits for a writer (a thread stuck there would keep the process from exiting).
 */
export async function openChunks(path: string, buffer: Buffer = Buffer.allocUnsafe(CHUNK_BYTES), interrupt?: AbortSignal): Promise<ChunkReader> {
  if (path === '-') return streamChunks(process.stdin, 'stdin', async () => {}, interrupt);
  const opened = await openInput(path, interrupt);
  if (!isFileHandle(opened)) return streamChunks(opened, path, async () => {}, interrupt);
  const fh = opened;
  let gzip: boolean;
  try {
    // Not seekable (a pipe, a FIFO): read in order, as a stream; positional reads fail there with ESPIPE.
    if ((await kindOf(fh, path)) === 'stream') return streamChunks(fh.createReadStream({ highWaterMark: CHUNK_BYTES, autoClose: false }), path, () => fh.close(), interrupt);
    const head = Buffer.alloc(2);
    const { bytesRead } = await fh.read(head, 0, 2, 0);
    gzip = isGzip(head.subarray(0, bytesRead));
  } catch (err) {
    await fh.close();
    throw err instanceof Error && err.message.includes(path) ? err : new Error(`cannot read input ${path}: ${errorMessage(err)}`, { cause: err });
  }
  if (gzip) return streamChunks(fh.createReadStream({ start: 0, autoClose: false, highWaterMark: CHUNK_BYTES }), path, () => fh.close(), interrupt);
  return fileChunks(fh, path, buffer, 0, undefined);
}

/** The plain bytes [start, end) of an open regular file (to its end when `end` is undefined), read by position into `buffer`; close() closes the file. */
export function fileChunks(fh: FileHandle, path: string, buffer: Buffer, start: number, end: number | undefined): ChunkReader {
  let at = start;
  return {
    async next() {
      const want = end === undefined ? buffer.length : Math.min(buffer.length, end - at);
      if (want <= 0) return undefined;
      try {
        const { bytesRead: n } = await fh.read(buffer, 0, want, at);
        at += n;
        return n === 0 ? undefined : n === buffer.length ? buffer : buffer.subarray(0, n);
      } catch (err) {
        throw new Error(`cannot read input ${path}: ${errorMessage(err)}`, { cause: err });
      }
    },
    close: () => fh.close(),
  };
}

/**
 * Chunks of a byte stream, gunzipped when it starts with gzip's magic bytes; close() releases it and then
 * calls `closeSource`. `interrupt` aborted ends a read waiting for a pipe's next bytes at once (the stream
 * is destroyed), not when its writer writes again.
 */
export function streamChunks(input: Readable, label: string, closeSource: () => Promise<void>, interrupt?: AbortSignal): ChunkReader {
  let it: AsyncIterator<Buffer> | undefined;
  const destroy = () => input.destroy();
  interrupt?.addEventListener('abort', destroy, { once: true });
  const start = async (): Promise<AsyncIterator<Buffer>> => {
    const { head, rest } = await sniff(input as AsyncIterable<Buffer>);
    if (!isGzip(head)) return rest;
    const gunzip = createGunzip();
    // pipeline destroys both on an error in either, so the iterator sees it.
    pipeline(Readable.from(rest), gunzip, () => {});
    return (gunzip as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  };
  return {
    async next() {
      try {
        // A destroyed file stream still waits for its read in the thread pool to return: raced, not only awaited.
        it ??= await raceAbort(start(), interrupt);
        const r = await raceAbort(it.next(), interrupt);
        return r.done ? undefined : r.value;
      } catch (err) {
        if (interrupt?.aborted) throw interrupt.reason;
        throw new Error(`cannot read input ${label}: ${errorMessage(err)}`, { cause: err });
      }
    },
    async close() {
      interrupt?.removeEventListener('abort', destroy);
      await it?.return?.();
      await closeSource();
    },
  };
}

/** How an opened input is read: by position (a regular file), or in order (a pipe, FIFO, character device, socket). */
async function kindOf(fh: FileHandle, path: string): Promise<'file' | 'stream'> {
  let st: Stats;
  try {
    st = await fh.stat();
  } catch (err) {
    throw new Error(`cannot read input ${path}: ${errorMessage(err)}`, { cause: err });
  }
  if (st.isDirectory()) throw new Error(`cannot read input ${path}: EISDIR: it is a directory, not a log file`);
  return st.isFile() ? 'file' : 'stream';
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

export function isFileHandle(x: FileHandle | Readable): x is FileHandle {
  return !(x instanceof Readable);
}

/** Starts with gzip's magic bytes (recognised by content, not name). */
export function isGzip(head: Buffer): boolean {
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
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
      return fd === 0 ? process.stdin : createReadStream('', { fd, autoClose: false, highWaterMark: CHUNK_BYTES });
    }
    throw new Error(`cannot open input ${path}: ${errorMessage(err)}`, { cause: err });
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
