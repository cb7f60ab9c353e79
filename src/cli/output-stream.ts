// Output that may be large (a backtest's per-step table, an export of a week): written in pieces of about
// 64 KiB, waiting for the stream to drain, so a slow reader (a pipe into gzip, a terminal) holds back the
// replay instead of the output piling up in memory. A reader that goes away (`export … | head`) ends the
// run: the next write throws OutputClosed, and the replay unwinds, removing its scratch files.
import type { Writable } from 'node:stream';

const PIECE_CHARS = 64 * 1024;

export interface OutputStream {
  /** Adds text; resolves at once unless a piece was handed to the stream and it asked to wait. */
  write(text: string): void | Promise<void>;
  /** Writes what is left and waits until the stream has taken it. */
  flush(): Promise<void>;
}

/** The output stream failed (its reader closed the pipe: EPIPE, or the disk is full): nothing more can be written. */
export class OutputClosed extends Error {
  constructor(
    readonly code: string | undefined,
    cause: unknown,
  ) {
    super(`cannot write the output: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'OutputClosed';
  }
}

export function outputStream(stream: Writable): OutputStream {
  let pieces: string[] = [];
  let chars = 0;
  let failed: OutputClosed | undefined;
  /** Resolves the wait for 'drain' when the stream fails instead. */
  let wake: (() => void) | undefined;
  stream.on('error', (err: NodeJS.ErrnoException) => {
    failed ??= new OutputClosed(err.code, err);
    wake?.();
  });
  const hand = async () => {
    if (failed !== undefined) throw failed;
    const piece = pieces.join('');
    pieces = [];
    chars = 0;
    if (!stream.write(piece)) {
      await new Promise<void>((resolve) => {
        wake = resolve;
        stream.once('drain', resolve);
      });
      wake = undefined;
    }
    if (failed !== undefined) throw failed;
  };
  return {
    write(text) {
      if (failed !== undefined) throw failed;
      pieces.push(text);
      chars += text.length;
      if (chars >= PIECE_CHARS) return hand();
      return undefined;
    },
    async flush() {
      if (chars > 0 || failed !== undefined) await hand();
    },
  };
}
