// `export --format openmetrics`: the counters and histograms of a replayed log at every step, for
// `promtool tsdb create-blocks-from openmetrics` (src/history/openmetrics-export.ts).
import type { Config } from '../config/schema.js';
import { formatDuration } from '../config/duration.js';
import { exportOpenMetrics } from '../history/openmetrics-export.js';
import { targetLabels } from './target-labels.js';
import { timelineExit } from './timeline-exit.js';
import { limitError, maxBlocks, maxScratch, MAX_EXPORT_STEP_MS, timelineStep } from './timeline-limits.js';
import { UsageError } from './flags.js';
import type { OutputStream } from './output-stream.js';
import { inputHints } from './input-hints.js';
import { VERSION } from './version.js';
import { makeOutDir } from './write-files.js';

export interface ExportArgs {
  files: string[];
  format: string;
  step: string;
  out: string | undefined;
  labels: string[] | undefined;
  /** --max-blocks and --max-scratch (defaults when undefined). */
  maxBlocks?: string;
  maxScratch?: string;
  /** Aborted (SIGTERM, SIGINT): the replay stops between chunks and steps, and its scratch file is removed. */
  interrupt?: AbortSignal;
}

export async function runExport(config: Config, args: ExportArgs, out: OutputStream, hint: (text: string) => void, nowMs = Date.now()): Promise<number> {
  if (args.files.length === 0) throw new UsageError('export needs at least one FILE (or - for stdin)');
  if (args.format !== 'openmetrics') throw new UsageError(`--format must be openmetrics, not "${args.format}"`);
  const stepMs = timelineStep(args.step, MAX_EXPORT_STEP_MS);
  const blocks = maxBlocks(args.maxBlocks);
  const scratchBytes = maxScratch(args.maxScratch);
  const labels = targetLabels(config, args.labels ?? []);
  if (config.pack.evaluationInterval % stepMs !== 0 || config.pack.rateWindow % stepMs !== 0) {
    hint(
      `zero-plane-exporter: export: --step ${formatDuration(stepMs)} does not divide pack.evaluationInterval (${formatDuration(config.pack.evaluationInterval)}) and pack.rateWindow (${formatDuration(config.pack.rateWindow)}): ` +
        "the rules' windows will not start on a sample, so Prometheus extrapolates their increases\n",
    );
  }
  if (args.out !== undefined) makeOutDir(args.out, 'out');
  const result = await exportOpenMetrics(config, args.files, {
    maxBlocks: blocks,
    maxScratchBytes: scratchBytes,
    stepMs,
    nowMs,
    labels,
    to: args.out === undefined ? { write: (text) => out.write(text) } : { dir: args.out },
    version: VERSION,
    input: inputHints(hint, undefined),
    interrupt: args.interrupt,
  }).catch((err: unknown) => {
    throw limitError('export', err, blocks);
  });
  await out.flush();
  return timelineExit('export', result.summary, hint);
}
