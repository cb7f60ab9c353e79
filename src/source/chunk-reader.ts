// A file (plain or gzip) or stdin read one chunk at a time, when the reader asks for it: the replay of old
// logs (src/history) interleaves many files by their records' time, so it pulls from whichever is behind
// instead of having each pushed to it to its end. gzip is recognised by its magic bytes, as readInput does.
import { open, type FileHandle } from 'node:fs/promises';
import { pipeline, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';

export interface ChunkReader {
  /** The next bytes, valid until the next call (a plain file's are read into one shared buffer); undefined at the end. */
  next(): Promise<Buffer | undefined>;
  close(): Promise<void>;
}

const CHUNK_BYTES = 1 << 20;

/**
 * A reader of `path` ('-' for stdin). Plain files read into `buffer`, which readers may share because each
 * chunk is used up before the next read. Errors name the path.
 */
export async function openChunks(path: string, buffer: Buffer = Buffer.allocUnsafe(CHUNK_BYTES)): Promise<ChunkReader> {
  if (path === '-') return streamChunks(process.stdin, 'stdin', async () => {});
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    throw new Error(`cannot open input ${path}: ${messageOf(err)}`, { cause: err });
  }
  const head = Buffer.alloc(2);
  const { bytesRead } = await fh.read(head, 0, 2, 0);
  if (bytesRead === 2 && head[0] === 0x1f && head[1] === 0x8b) {
    const raw = fh.createReadStream({ start: 0, autoClose: false, highWaterMark: 256 * 1024 });
    const gunzip = createGunzip();
    // pipeline destroys both on an error in either, so the iterator below sees it.
    pipeline(raw, gunzip, () => {});
    return streamChunks(gunzip, path, () => fh.close());
  }
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

/** Chunks of a stream (stdin, or a file's gunzip); stdin is itself gunzipped when it starts with gzip's magic bytes. */
function streamChunks(input: Readable, label: string, closeSource: () => Promise<void>): ChunkReader {
  let it: AsyncIterator<Buffer> = (input as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  let sniffed = input !== process.stdin;
  let first: Buffer | undefined;
  return {
    async next() {
      try {
        if (!sniffed) {
          sniffed = true;
          const r = await it.next();
          if (r.done) return undefined;
          if (r.value.length >= 2 && r.value[0] === 0x1f && r.value[1] === 0x8b) {
            const gunzip = createGunzip();
            pipeline(Readable.from(replay(r.value, it)), gunzip, () => {});
            it = (gunzip as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
          } else {
            first = r.value;
          }
        }
        if (first !== undefined) {
          const f = first;
          first = undefined;
          return f;
        }
        const r = await it.next();
        return r.done ? undefined : r.value;
      } catch (err) {
        throw new Error(`cannot read input ${label}: ${messageOf(err)}`, { cause: err });
      }
    },
    async close() {
      await it.return?.();
      await closeSource();
    },
  };
}

/** The chunk already read, then the rest of the stream. */
async function* replay(head: Buffer, rest: AsyncIterator<Buffer>): AsyncGenerator<Buffer> {
  yield head;
  for (let r = await rest.next(); !r.done; r = await rest.next()) yield r.value;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
