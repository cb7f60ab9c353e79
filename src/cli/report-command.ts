// `report`: read inputs to their end, print the signals over all of them, optionally fail on a condition.
import type { Config } from '../config/schema.js';
import { Pipeline } from '../pipeline.js';
import { P0_ALERT, REPORT_ALERTS } from '../report/alerts.js';
import { buildReport } from '../report/build-report.js';
import { formatText } from '../report/format-text.js';
import type { Logger } from '../server/logger.js';
import { UsageError } from './flags.js';
import { inputHints } from './input-hints.js';
import { parallelMinBytes, readReportInput, SecondThread } from './report-parallel.js';
import { GROUP_LABELS, isGroupLabel, type GroupLabel } from '../windows/grouped-aggregates.js';

export const EXIT_FAIL_ON = 3;
/**
 * Non-empty input of which not one line became a record, or an input whose records never carried a wanted
 * response header field: nothing in the report is about the gateway.
 */
export const EXIT_NOT_UNDERSTOOD = 1;

export interface ReportArgs {
  files: string[];
  format: string;
  failOn: string | undefined;
  /** `--by`: group the signals by this record label too. */
  by?: string | undefined;
}

/**
 * Runs the report and returns the exit code; output goes to `out`, hints about inputs it could not read
 * right to `hint` (stderr). Big plain files are read on two threads (report-parallel.ts); `log` at debug
 * says so ("report: 2 threads") and which preset each input was read with. `interrupt` aborted stops the
 * reads and rejects with its reason, printing nothing (main.ts races it, answering with the signal's code).
 */
export async function runReport(config: Config, args: ReportArgs, out: (text: string) => void, log?: Logger, hint: (text: string) => void = () => {}, interrupt?: AbortSignal): Promise<number> {
  if (args.files.length === 0) throw new UsageError('report needs at least one FILE (or - for stdin)');
  if (args.format !== 'json' && args.format !== 'text') throw new UsageError(`--format must be json or text, not "${args.format}"`);
  const groupBy = parseBy(args.by);
  const pipeline = new Pipeline(config, { keepTotals: true, input: inputHints(hint, log), ...(groupBy === undefined ? {} : { groupBy }) });
  const failOn = parseFailOn(args.failOn);
  const minBytes = parallelMinBytes();
  const thread = new SecondThread();
  const read = (async () => {
    try {
      for (const file of args.files) {
        log?.debug('report: reading input', { file });
        await readReportInput(file, config, pipeline, log, minBytes, thread, interrupt);
      }
    } finally {
      await thread.close();
    }
  })();
  await read;
  // Stopped after the last read: still nothing printed (the caller has answered with the signal's code).
  interrupt?.throwIfAborted();
  pipeline.finish();
  const report = buildReport(pipeline, config);
  out(args.format === 'json' ? `${JSON.stringify(report, null, 2)}\n` : formatText(report));
  if (report.lines > 0 && report.records === 0) {
    hint(`zero-plane-exporter: no line of the input became a record (${report.lines} lines read); exit ${EXIT_NOT_UNDERSTOOD}\n`);
    return EXIT_NOT_UNDERSTOOD;
  }
  // Every signal of such an input is a guess (0 hits, 0 degraded): as useless as one with no record.
  const headerless = pipeline.headersNeverSeen();
  if (headerless.length > 0) {
    const which = headerless.map(([source, n]) => `${source} (${n} records)`).join(', ');
    hint(`zero-plane-exporter: not one record of ${which} carried a wanted response header; exit ${EXIT_NOT_UNDERSTOOD}\n`);
    return EXIT_NOT_UNDERSTOOD;
  }
  const firing = new Set(report.alerts.filter((a) => a.firing).map((a) => a.name));
  return failOn.some((name) => firing.has(name)) ? EXIT_FAIL_ON : 0;
}

function parseBy(spec: string | undefined): GroupLabel | undefined {
  if (spec === undefined) return undefined;
  if (!isGroupLabel(spec)) throw new UsageError(`--by must be one of ${GROUP_LABELS.join(', ')}, not "${spec}"`);
  return spec;
}

function parseFailOn(spec: string | undefined): string[] {
  if (spec === undefined) return [];
  const known = new Set<string>(REPORT_ALERTS);
  return spec.split(',').map((part) => {
    const name = part.trim() === 'P0' ? P0_ALERT : part.trim();
    if (!known.has(name)) throw new UsageError(`--fail-on: unknown condition "${part}"; use P0 or one of ${[...known].join(', ')}`);
    return name;
  });
}
