// What bounds a replayed timeline, shared by the replay, the export and the commands' messages (kept
// apart so that `backtest` does not load the export to name them).

/** Prometheus' block duration: one `export --out` file per block, and the unit of --max-blocks. */
export const BLOCK_MS = 2 * 3_600_000;

/** The timeline would be longer than ReplayOptions.maxSpanMs: the figures, for the command's message. */
export class TimelineTooLong extends Error {
  constructor(
    readonly fromMs: number,
    readonly toMs: number,
    readonly maxSpanMs: number,
  ) {
    super(`the timeline would span ${new Date(fromMs).toISOString()} to ${new Date(toMs).toISOString()}, more than ${maxSpanMs} ms`);
    this.name = 'TimelineTooLong';
  }
}

/** The scratch file of an export to stdout would grow past ExportOptions.maxScratchBytes. */
export class ScratchTooLarge extends Error {
  constructor(
    readonly bytes: number,
    readonly maxBytes: number,
  ) {
    super(`the scratch file would take at least ${bytes} bytes, more than ${maxBytes}`);
    this.name = 'ScratchTooLarge';
  }
}
