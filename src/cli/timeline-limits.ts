// The bounds of `backtest` and `export`, checked before any work or as soon as the range is known: the
// step (a huge one would put samples at 1970 and the year 318,857), the span of the timeline in 2 h
// blocks (--max-blocks: the files of `export --out`, and the steps either command counts), and the
// scratch file of an export to stdout (--max-scratch). Past one, the command refuses with exit 2 and the figure.
import { formatDuration, parseDuration } from '../config/duration.js';
import { BLOCK_MS, ScratchTooLarge, TimelineTooLong } from '../history/timeline-bounds.js';
import { UsageError } from './flags.js';

/** The shortest step either command takes: finer steps multiply the work, not the exactness. */
export const MIN_STEP_MS = 1_000;
/** export's longest step: Prometheus' default lookback delta (5m); a sparser series has instants with no value. */
export const MAX_EXPORT_STEP_MS = 5 * 60_000;
export const DEFAULT_MAX_BLOCKS = 1_200;
const MAX_MAX_BLOCKS = 1_000_000;
export const DEFAULT_MAX_SCRATCH = '4GiB';

const SIZE = /^(\d+(?:\.\d+)?)(B|KiB|MiB|GiB|TiB)$/;
const SIZE_BYTES: Record<string, number> = { B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, TiB: 1024 ** 4 };

/** The step of a timeline command, whole seconds from MIN_STEP_MS to `maxMs`; UsageError naming the range otherwise. */
export function timelineStep(text: string, maxMs: number): number {
  const ms = parseDuration(text);
  const range = `from ${formatDuration(MIN_STEP_MS)} to ${formatDuration(maxMs)}, in whole seconds`;
  if (ms === undefined) throw new UsageError(`--step: "${text}" is not a duration such as 15s (allowed: ${range})`);
  if (ms < MIN_STEP_MS || ms > maxMs || ms % 1000 !== 0) throw new UsageError(`--step: ${text} is out of range: allowed ${range}`);
  return ms;
}

/** --max-blocks: a whole number of 2 h blocks, 1 to 1,000,000. */
export function maxBlocks(text: string | undefined): number {
  if (text === undefined) return DEFAULT_MAX_BLOCKS;
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > MAX_MAX_BLOCKS) throw new UsageError(`--max-blocks: "${text}" is not a whole number of 2h blocks from 1 to ${MAX_MAX_BLOCKS}`);
  return n;
}

/** --max-scratch: a size such as 512MiB or 4GiB. */
export function maxScratch(text: string | undefined): number {
  const m = SIZE.exec(text ?? DEFAULT_MAX_SCRATCH);
  const bytes = m === null ? Number.NaN : Number(m[1]) * (SIZE_BYTES[m[2] as string] as number);
  if (!(bytes >= 1)) throw new UsageError(`--max-scratch: "${text}" is not a size such as 512MiB or 4GiB`);
  return Math.floor(bytes);
}

/** A refusal of the replay as the usage error it is (exit 2), with the figures; other errors unchanged. */
export function limitError(command: string, err: unknown, blocks: number): unknown {
  if (err instanceof TimelineTooLong) {
    const needed = Math.ceil((err.toMs - err.fromMs) / BLOCK_MS);
    return new UsageError(
      `${command}: the timeline would span ${spanText(err.toMs - err.fromMs)} (${new Date(err.fromMs).toISOString()} to ${new Date(err.toMs).toISOString()}): ` +
        `at least ${needed} blocks of 2h, more than --max-blocks ${blocks}. Check the records' times (a stale clock: history.maxGap, history.minCluster) or raise --max-blocks`,
    );
  }
  if (err instanceof ScratchTooLarge) {
    return new UsageError(
      `${command}: the scratch file would take at least ${err.bytes} bytes, more than --max-scratch (${err.maxBytes} bytes); use --out DIR (no scratch file) or raise --max-scratch`,
    );
  }
  return err;
}

/** "27.0 years", "3.5 days", "2h": the span a refusal names. */
function spanText(ms: number): string {
  const days = ms / 86_400_000;
  if (days >= 365) return `${(days / 365.25).toFixed(1)} years`;
  if (days >= 2) return `${days.toFixed(1)} days`;
  return formatDuration(Math.round(ms / 1000) * 1000);
}
