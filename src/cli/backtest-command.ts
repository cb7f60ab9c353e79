// `backtest`: the pack's alerts on a log's own timeline (src/history/backtest.ts), printed as a per-step
// table and what fired when (src/history/backtest-output.ts).
import type { Config } from '../config/schema.js';
import { formatDuration } from '../config/duration.js';
import { BLOCK_MS } from '../history/timeline-bounds.js';
import { backtest, backtestWindows } from '../history/backtest.js';
import { BACKTEST_FORMATS, backtestWriter, type BacktestFormat } from '../history/backtest-output.js';
import { UsageError } from './flags.js';
import type { OutputStream } from './output-stream.js';
import { inputHints } from './input-hints.js';
import { targetLabels } from './target-labels.js';
import { timelineExit } from './timeline-exit.js';
import { limitError, maxBlocks, timelineStep } from './timeline-limits.js';

export interface BacktestArgs {
  files: string[];
  format: string;
  step: string | undefined;
  /** --label NAME=VALUE: target labels, as `export --label` (default job from pack.selector, instance=backfill). */
  labels?: string[] | undefined;
  /** --compare-naive: the naive mean-latency alert and the pack's lead over it. */
  compareNaive?: boolean;
  /** --max-blocks (the default when undefined): the longest timeline, in 2 h blocks. */
  maxBlocks?: string;
  /** Aborted (SIGTERM, SIGINT): the replay stops between chunks and steps. */
  interrupt?: AbortSignal;
}

export async function runBacktest(config: Config, args: BacktestArgs, out: OutputStream, hint: (text: string) => void, nowMs = Date.now()): Promise<number> {
  if (args.files.length === 0) throw new UsageError('backtest needs at least one FILE (or - for stdin)');
  if (!BACKTEST_FORMATS.includes(args.format as BacktestFormat)) throw new UsageError(`--format must be one of ${BACKTEST_FORMATS.join(', ')}, not "${args.format}"`);
  // At most the rate window: a step must divide it (checked below with every window).
  const stepMs = args.step === undefined ? config.pack.evaluationInterval : timelineStep(args.step, config.pack.rateWindow);
  const blocks = maxBlocks(args.maxBlocks);
  const labels = targetLabels(config, args.labels ?? []);
  const uneven = backtestWindows(config).filter((w) => w % stepMs !== 0);
  if (uneven.length > 0) throw new UsageError(`--step ${formatDuration(stepMs)} must divide every window the alerts read; it does not divide ${uneven.map(formatDuration).join(', ')}`);
  const writer = backtestWriter(args.format as BacktestFormat, (text) => out.write(text), config.pack.rateWindow);
  const options = { stepMs, nowMs, input: inputHints(hint, undefined), interrupt: args.interrupt, maxSpanMs: blocks * BLOCK_MS, targetLabels: labels, compareNaive: args.compareNaive === true };
  const result = await backtest(config, args.files, options, (row) => writer.row(row)).catch((err: unknown) => {
    throw limitError('backtest', err, blocks);
  });
  await writer.end(result);
  await out.flush();
  return timelineExit('backtest', result.summary, hint);
}
