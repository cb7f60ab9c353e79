// `backtest`: the pack's alerts on a log's own timeline (src/history/backtest.ts), printed as a per-step
// table and what fired when (src/history/backtest-output.ts).
import type { Config } from '../config/schema.js';
import { formatDuration, parseDuration } from '../config/duration.js';
import { backtest, backtestWindows } from '../history/backtest.js';
import { BACKTEST_FORMATS, backtestWriter, skippedText, type BacktestFormat } from '../history/backtest-output.js';
import type { ReplaySummary } from '../history/replay.js';
import { UsageError } from './flags.js';
import type { OutputStream } from './output-stream.js';
import { inputHints } from './report-command.js';

/** Lines were read and not one became a record on the timeline: nothing in the output is about the gateway. */
export const EXIT_NOTHING_ON_TIMELINE = 1;

export interface BacktestArgs {
  files: string[];
  format: string;
  step: string | undefined;
}

export async function runBacktest(config: Config, args: BacktestArgs, out: OutputStream, hint: (text: string) => void, nowMs = Date.now()): Promise<number> {
  if (args.files.length === 0) throw new UsageError('backtest needs at least one FILE (or - for stdin)');
  if (!BACKTEST_FORMATS.includes(args.format as BacktestFormat)) throw new UsageError(`--format must be one of ${BACKTEST_FORMATS.join(', ')}, not "${args.format}"`);
  const stepMs = args.step === undefined ? config.pack.evaluationInterval : parseDuration(args.step);
  if (stepMs === undefined || stepMs <= 0 || !Number.isInteger(stepMs)) throw new UsageError(`--step: "${args.step}" is not a duration such as 30s`);
  const uneven = backtestWindows(config).filter((w) => w % stepMs !== 0);
  if (uneven.length > 0) throw new UsageError(`--step ${formatDuration(stepMs)} must divide every window the alerts read; it does not divide ${uneven.map(formatDuration).join(', ')}`);
  const writer = backtestWriter(args.format as BacktestFormat, (text) => out.write(text), config.pack.rateWindow);
  const result = await backtest(config, args.files, { stepMs, nowMs, input: inputHints(hint, undefined) }, (row) => writer.row(row));
  await writer.end(result);
  await out.flush();
  return timelineExit('backtest', result.summary, hint);
}

/** What `backtest` and `export` say on stderr about the lines they left off the timeline, and their exit code. */
export function timelineExit(command: string, s: ReplaySummary, hint: (text: string) => void): number {
  const skipped = skippedText(s);
  if (skipped !== undefined) hint(`zero-plane-exporter: ${command}: skipped ${skipped}\n`);
  if (s.lines > 0 && s.records === 0) {
    hint(`zero-plane-exporter: no line of the input became a record on the timeline (${s.lines} lines read); exit ${EXIT_NOTHING_ON_TIMELINE}\n`);
    return EXIT_NOTHING_ON_TIMELINE;
  }
  return 0;
}
