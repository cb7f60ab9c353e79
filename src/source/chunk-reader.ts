// A file (plain or gzip), a pipe or stdin read one chunk at a time, when the reader asks for it: the replay
// of old logs (src/history) interleaves many files by their records' time, so it pulls from whichever is
// behind instead of having each pushed to it to its end. Inputs are opened, told apart and sniffed for gzip
// as readInput does it (read-input.ts), so `backtest <(zcat …)` and a FIFO read as `report` reads them.
import type { FileHandle } from 'node:fs/promises';
import { pipeline, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { isFileHandle, isGzip, kindOf, openInput, sniff } from './read-input.js';

export interface ChunkReader {
  /** The next bytes, valid until the next call (a plain file's are read into one shared buffer); undefined at the end. */
  next(): Promise<Buffer | undefined>;
  close(): Promise<void>;
}

const CHUNK_BYTES = 1 << 20;

/**
 * A reader of `path` ('-' for stdin). Plain files read into `buffer`, which readers may share because each
 * chunk is used up before the next read. Errors name the path. `interrupt` aborted lets go of a FIFO whose
 * open() still waits for a writer (a thread stuck there would keep the process from exiting).
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
    throw err instanceof Error && err.message.includes(path) ? err : new Error(`cannot read input ${path}: ${messageOf(err)}`, { cause: err });
  }
  if (gzip) return streamChunks(fh.createReadStream({ start: 0, autoClose: false, highWaterMark: 256 * 1024 }), path, () => fh.close());
  return fileChunks(fh, path, buffer);
}

/** A regular file's plain bytes, read by position into the shared buffer. */
function fileChunks(fh: FileHandle, path: string, buffer: Buffer): ChunkReader {
  let at = 0;
  return {
    async next() {
      try {
        const { bytesRead: n } = await fh.read(buffer, 0, buffer.length, at);
        at += n;
        return n === 0 ? undefined : buffer.subarray(0, n);
      } catch (err) {
        throw new Error(`cannot read input ${path}: ${messageOf(err)}`, { cause: err });
      }
    },
    close: () => fh.close(),
  };
}

/**
 * Chunks of a byte stream, gunzipped when it starts with gzip's magic bytes. `interrupt` aborted ends a
 * read waiting for a pipe's next bytes at once (the stream is destroyed), not when its writer writes again.
 */
function streamChunks(input: Readable, label: string, closeSource: () => Promise<void>, interrupt?: AbortSignal): ChunkReader {
  let it: AsyncIterator<Buffer> | undefined;
  interrupt?.addEventListener('abort', () => input.destroy(), { once: true });
  // A destroyed file stream still waits for its read in the thread pool to return: raced, not only awaited.
  // Its listener is removed once `p` settles: a read per chunk must not leave one behind each time.
  const untilAborted = <T>(p: Promise<T>): Promise<T> => {
    if (interrupt === undefined) return p;
    p.catch(() => undefined);
    return new Promise<T>((resolve, reject) => {
      if (interrupt.aborted) return reject(interrupt.reason);
      const onAbort = () => reject(interrupt.reason);
      interrupt.addEventListener('abort', onAbort, { once: true });
      const done = () => interrupt.removeEventListener('abort', onAbort);
      p.then(
        (v) => (done(), resolve(v)),
        (e: unknown) => (done(), reject(e)),
      );
    });
  };
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
        it ??= await untilAborted(start());
        const r = await untilAborted(it.next());
        return r.done ? undefined : r.value;
      } catch (err) {
        if (interrupt?.aborted) throw interrupt.reason;
        throw new Error(`cannot read input ${label}: ${messageOf(err)}`, { cause: err });
      }
    },
    async close() {
      await it?.return?.();
      await closeSource();
    },
  };
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
