// The monitoring mixin's generated part (mixin/generated/): the rules, alerts and dashboards rendered
// with tokens (@@by@@, @@selector@@, …) where the aggregation labels, the selector and the runbook URL
// go. mixin/mixin.libsonnet replaces them from its _config, so a jsonnet user (kube-prometheus) sets
// those three in jsonnet and gets exactly what `generate` would write for them; every threshold is the
// config's that generated these files.
import type { Config } from '../config/schema.js';
import { dashboards } from '../dashboards/render-dashboards.js';
import { templateGrouping, TOKEN } from '../pack/grouping.js';
import { ruleGroups } from '../pack/rules.js';

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** Relative path under mixin/ → file content. */
export function renderMixin(config: Config): Map<string, string> {
  const template: Config = { ...config, pack: { ...config.pack, runbookUrl: TOKEN('runbookUrl') } };
  const g = templateGrouping();
  const groups = ruleGroups(template, g);
  const recording = groups.filter((group) => group.rules.every((r) => 'record' in r));
  const alerting = groups.filter((group) => group.rules.every((r) => 'alert' in r));
  if (recording.length + alerting.length !== groups.length) throw new Error('a rule group mixes recording and alerting rules');
  const boards = Object.fromEntries(dashboards(template, g).map((d) => [`${d.uid as string}.json`, d]));
  return new Map([
    // The _config defaults: what the rest of the pack was generated with.
    ['generated/config.json', json({ selector: config.pack.selector, aggregationLabels: config.pack.aggregationLabels, runbookUrl: config.pack.runbookUrl })],
    ['generated/prometheus_rules.json', json({ groups: recording })],
    ['generated/prometheus_alerts.json', json({ groups: alerting })],
    ['generated/dashboards.json', json(boards)],
  ]);
}
