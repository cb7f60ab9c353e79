// Output that may be large (a backtest's per-step table, an export of a week): written in pieces of about
// 64 KiB, waiting for the stream to drain, so a slow reader (a pipe into gzip, a terminal) holds back the
// replay instead of the output piling up in memory.
import type { Writable } from 'node:stream';

const PIECE_CHARS = 64 * 1024;

export interface OutputStream {
  /** Adds text; resolves at once unless a piece was handed to the stream and it asked to wait. */
  write(text: string): void | Promise<void>;
  /** Writes what is left and waits until the stream has taken it. */
  flush(): Promise<void>;
}

export function outputStream(stream: Writable): OutputStream {
  let pending = '';
  const hand = async () => {
    const piece = pending;
    pending = '';
    if (!stream.write(piece)) await new Promise<void>((resolve) => stream.once('drain', resolve));
  };
  return {
    write(text) {
      pending += text;
      if (pending.length >= PIECE_CHARS) return hand();
      return undefined;
    },
    async flush() {
      if (pending !== '') await hand();
    },
  };
}
