// `report`: read inputs to their end, print the signals over all of them, optionally fail on a condition.
import type { Config } from '../config/schema.js';
import { Pipeline } from '../pipeline.js';
import { P0_ALERT, REPORT_ALERTS } from '../report/alerts.js';
import { buildReport } from '../report/build-report.js';
import { formatText } from '../report/format-text.js';
import type { Logger } from '../server/logger.js';
import { UsageError } from './flags.js';
import { parallelMinBytes, readReportInput } from './report-parallel.js';

export const EXIT_FAIL_ON = 3;

export interface ReportArgs {
  files: string[];
  format: string;
  failOn: string | undefined;
}

/**
 * Runs the report and returns the exit code; output goes to `out`. Big plain files are read on two threads
 * (report-parallel.ts); `log` at debug says so ("report: 2 threads").
 */
export async function runReport(config: Config, args: ReportArgs, out: (text: string) => void, log?: Logger): Promise<number> {
  if (args.files.length === 0) throw new UsageError('report needs at least one FILE (or - for stdin)');
  if (args.format !== 'json' && args.format !== 'text') throw new UsageError(`--format must be json or text, not "${args.format}"`);
  const pipeline = new Pipeline(config, { keepTotals: true });
  const failOn = parseFailOn(args.failOn);
  const minBytes = parallelMinBytes();
  for (const file of args.files) await readReportInput(file, config, pipeline, log, minBytes);
  const report = buildReport(pipeline, config);
  out(args.format === 'json' ? `${JSON.stringify(report, null, 2)}\n` : formatText(report));
  const firing = new Set(report.alerts.filter((a) => a.firing).map((a) => a.name));
  return failOn.some((name) => firing.has(name)) ? EXIT_FAIL_ON : 0;
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
