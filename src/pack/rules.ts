// Prometheus recording and alerting rules, generated from the same config the exporter reads, so a
// threshold can never differ between what the exporter exposes and what the rules alert on.
import type { Config } from '../config/schema.js';
import { formatDuration } from '../config/duration.js';
import { alertSpecs } from './alert-specs.js';
import { earlyWarningRules, earlyWarningSpecs } from './early-warning.js';
import { renderCondition, type AlertSpec } from './conditions.js';
import { groupingOf, on, type Grouping } from './grouping.js';
import { probeRules, probeSpecs } from './probe-rules.js';
import { recordedSignal, signalRules, sloRules } from './recording-rules.js';
import type { RecordingRule } from './recording-rules.js';

export { ALERT_NAMES, MORE_ALERT_NAMES, P0_ALERT, P99_TAIL, type AlertName } from './alert-specs.js';
export { EARLY_WARNING_ALERT_NAMES } from './early-warning.js';
export { PROBE_FALLBACK_ALERT } from './probe-rules.js';
export { nonCanaryCohortRegex, type RecordingRule } from './recording-rules.js';

export interface AlertingRule {
  alert: string;
  expr: string;
  for?: string;
  keep_firing_for?: string;
  labels: Record<string, string>;
  annotations: { summary: string; description: string; runbook_url: string };
}

export interface RuleGroup {
  name: string;
  interval: string;
  rules: (RecordingRule | AlertingRule)[];
}

/** Rule group names, in evaluation order (promtool tests list them in group_eval_order). */
export const GROUP_NAMES = ['zero-plane.rules', 'zero-plane.slo.rules', 'zero-plane.alerts'] as const;

/** An alert spec as a Prometheus alerting rule. */
export function alertingRule(config: Config, g: Grouping, spec: AlertSpec): AlertingRule {
  const expr = spec.expr ?? renderCondition(spec, (ref) => recordedSignal(config, ref), `and ${on(g, ...spec.per)}`);
  return {
    alert: spec.alert,
    expr,
    ...(spec.for === 0 ? {} : { for: formatDuration(spec.for) }),
    ...(spec.keepFiringFor === 0 ? {} : { keep_firing_for: formatDuration(spec.keepFiringFor) }),
    labels: spec.labels,
    annotations: { summary: spec.summary, description: spec.description, runbook_url: `${config.pack.runbookUrl}#${spec.alert.toLowerCase()}` },
  };
}

export function ruleGroups(config: Config, g: Grouping = groupingOf(config)): RuleGroup[] {
  const interval = formatDuration(config.pack.evaluationInterval);
  const [signals, slo, alerts] = GROUP_NAMES;
  return [
    { name: signals, interval, rules: [...signalRules(config, g), ...earlyWarningRules(config, g), ...probeRules(config, g)] },
    { name: slo, interval, rules: sloRules(config, g) },
    { name: alerts, interval, rules: [...alertSpecs(config, g), ...earlyWarningSpecs(config, g), ...probeSpecs(config, g)].map((spec) => alertingRule(config, g, spec)) },
  ];
}
