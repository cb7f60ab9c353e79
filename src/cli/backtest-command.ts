// `backtest`: the pack's alerts on a log's own timeline (src/history/backtest.ts), printed as a per-step
// table and what fired when (src/history/backtest-output.ts).
import type { Config } from '../config/schema.js';
import { formatDuration, parseDuration } from '../config/duration.js';
import { backtest, backtestWindows } from '../history/backtest.js';
import { BACKTEST_FORMATS, backtestWriter, type BacktestFormat } from '../history/backtest-output.js';
import { UsageError } from './flags.js';
import type { OutputStream } from './output-stream.js';
import { inputHints } from './input-hints.js';
import { timelineExit } from './timeline-exit.js';

export interface BacktestArgs {
  files: string[];
  format: string;
  step: string | undefined;
  /** Aborted (SIGTERM, SIGINT): the replay stops between chunks and steps. */
  interrupt?: AbortSignal;
}

export async function runBacktest(config: Config, args: BacktestArgs, out: OutputStream, hint: (text: string) => void, nowMs = Date.now()): Promise<number> {
  if (args.files.length === 0) throw new UsageError('backtest needs at least one FILE (or - for stdin)');
  if (!BACKTEST_FORMATS.includes(args.format as BacktestFormat)) throw new UsageError(`--format must be one of ${BACKTEST_FORMATS.join(', ')}, not "${args.format}"`);
  const stepMs = args.step === undefined ? config.pack.evaluationInterval : parseDuration(args.step);
  if (stepMs === undefined || stepMs <= 0 || !Number.isInteger(stepMs)) throw new UsageError(`--step: "${args.step}" is not a duration such as 30s`);
  const uneven = backtestWindows(config).filter((w) => w % stepMs !== 0);
  if (uneven.length > 0) throw new UsageError(`--step ${formatDuration(stepMs)} must divide every window the alerts read; it does not divide ${uneven.map(formatDuration).join(', ')}`);
  const writer = backtestWriter(args.format as BacktestFormat, (text) => out.write(text), config.pack.rateWindow);
  const result = await backtest(config, args.files, { stepMs, nowMs, input: inputHints(hint, undefined), interrupt: args.interrupt }, (row) => writer.row(row));
  await writer.end(result);
  await out.flush();
  return timelineExit('backtest', result.summary, hint);
}
