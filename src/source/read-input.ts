// A whole input's lines, pushed to a sink: what `report` reads. The input is opened and read chunk by
// chunk as chunk-reader.ts does it for every command (files, gzip, stdin, pipes, FIFOs, <(cmd)).
import type { EnvelopeMode } from './envelope.js';
import type { LineSink } from './line-sink.js';
import { LineSplitter } from './line-splitter.js';
import { CHUNK_BYTES, fileChunks, isFileHandle, openChunks, openInput, streamChunks, type ChunkReader } from './chunk-reader.js';
import type { Readable } from 'node:stream';

export interface ReadInputOptions {
  maxLineBytes: number;
  /** input.envelope; default `none`. */
  envelope?: EnvelopeMode;
  /** Stops the read (between chunks) when aborted: the read rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * Reads a whole input to its end, delivering its lines: a file, stdin when path is '-', or anything else
 * that can be opened and read in order (a pipe, a FIFO, /dev/stdin, process substitution's /dev/fd/N).
 * Gzip is recognised by its magic bytes, not the file name, so rotated logs compressed under any name
 * read the same as plain ones. Every error names the input.
 */
export async function readInput(path: string, opts: ReadInputOptions, sink: LineSink, source: string = path === '-' ? 'stdin' : path): Promise<void> {
  await withReadBuffer(async (buffer) => pushAll(await openChunks(path, buffer, opts.signal), new LineSplitter(opts.maxLineBytes, sink, source, undefined, opts.envelope), opts.signal));
}

/**
 * Reads the plain (never gzip) bytes of a file from `start` (a line's first byte) to `end` (exclusive; to
 * its end when undefined), delivering their lines: one part of a file that `report` reads on two threads.
 */
export async function readFileRange(path: string, start: number, end: number | undefined, opts: ReadInputOptions, sink: LineSink, source: string = path): Promise<void> {
  const splitter = new LineSplitter(opts.maxLineBytes, sink, source, undefined, opts.envelope);
  if (end !== undefined && end <= start) {
    splitter.flush();
    return;
  }
  const fh = await openInput(path, opts.signal);
  if (!isFileHandle(fh)) throw new Error(`cannot read input ${path}: not a file that can be read in parts`);
  await withReadBuffer((buffer) => pushAll(fileChunks(fh, path, buffer, start, end), splitter, opts.signal));
}

/** The stream half of readInput: lines of a plain or gzip byte stream, flushed at its end. */
export async function readInputStream(input: Readable, opts: ReadInputOptions, sink: LineSink, source: string, label: string = source): Promise<void> {
  await pushAll(
    streamChunks(input, label, async () => {}, opts.signal),
    new LineSplitter(opts.maxLineBytes, sink, source, undefined, opts.envelope),
    opts.signal,
  );
}

/** Every chunk of `reader` into the splitter, then its last line; the reader is closed either way. */
async function pushAll(reader: ChunkReader, splitter: LineSplitter, signal: AbortSignal | undefined): Promise<void> {
  try {
    for (;;) {
      signal?.throwIfAborted();
      const chunk = await reader.next();
      if (chunk === undefined) break;
      splitter.push(chunk);
    }
  } finally {
    const closing = reader.close();
    // Stopped, a read may still wait on a pipe whose writer stays open, and its close with it.
    if (signal?.aborted === true) closing.catch(() => undefined);
    else await closing;
  }
  splitter.flush();
}

/**
 * Runs `read` with the read buffer of the input read before, when none is being read: 30 files in one
 * report are one 1 MiB buffer, not 30. A stream handing out a new buffer per chunk held the peak RSS of
 * `report` up by tens of MiB (the ones outliving two young-generation collections wait for a full one).
 */
async function withReadBuffer(read: (buffer: Buffer) => Promise<void>): Promise<void> {
  const buffer = spareBuffer ?? Buffer.allocUnsafe(CHUNK_BYTES);
  spareBuffer = undefined;
  try {
    await read(buffer);
  } finally {
    spareBuffer = buffer;
  }
}

let spareBuffer: Buffer | undefined;
