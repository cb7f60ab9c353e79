// `export --format openmetrics`: the counters and histograms of a replayed log at every step, for
// `promtool tsdb create-blocks-from openmetrics` (src/history/openmetrics-export.ts).
import type { Config } from '../config/schema.js';
import { formatDuration } from '../config/duration.js';
import { exportedFamilies, exportOpenMetrics, familyLabelNames } from '../history/openmetrics-export.js';
import { Pipeline } from '../pipeline.js';
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

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

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

/**
 * The target labels, as the scrape would have added them: job (the one pack.selector names, else
 * zero-plane-exporter) and instance ("backfill") unless given, then the others in the order given.
 */
function targetLabels(config: Config, given: readonly string[]): [string, string][] {
  const reserved = familyLabelNames(exportedFamilies(config, new Pipeline(config, { countersOnly: true }), VERSION));
  const labels = new Map<string, string>();
  for (const text of given) {
    const eq = text.indexOf('=');
    const name = eq < 0 ? text : text.slice(0, eq);
    if (eq < 0 || !LABEL_NAME.test(name) || name.startsWith('__')) throw new UsageError(`--label: "${text}" is not NAME=VALUE with a Prometheus label name`);
    if (reserved.has(name)) throw new UsageError(`--label: ${name} is a label of the exported metrics themselves`);
    labels.set(name, text.slice(eq + 1));
  }
  const job = /^job="([^"\\]*)"$/.exec(config.pack.selector)?.[1] ?? 'zero-plane-exporter';
  return [['job', labels.get('job') ?? job], ['instance', labels.get('instance') ?? 'backfill'], ...[...labels].filter(([k]) => k !== 'job' && k !== 'instance')];
}
