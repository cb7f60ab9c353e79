// `--label NAME=VALUE` of `export` and `backtest`: the target labels the scrape would have added, the same
// for both so a backtest sums its series in the order Prometheus sums the export's (backtest.ts).
import type { Config } from '../config/schema.js';
import { exportedFamilies, familyLabelNames } from '../history/openmetrics-export.js';
import { Pipeline } from '../pipeline.js';
import { UsageError } from './flags.js';
import { VERSION } from './version.js';

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/**
 * The target labels, as the scrape would have added them: job (the one pack.selector names, else
 * zero-plane-exporter) and instance ("backfill") unless given, then the others in the order given.
 * A text that is not NAME=VALUE, a `__` name or a label of the exported metrics themselves is refused.
 */
export function targetLabels(config: Config, given: readonly string[]): [string, string][] {
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
