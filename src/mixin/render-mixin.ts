// The monitoring mixin's generated part (mixin/generated/): the rules, alerts and dashboards rendered
// with tokens where the aggregation labels, the selector, the runbook URL and every tunable threshold go
// (@@by@@, @@selector@@, @@ceiling.ms@@, …). mixin/mixin.libsonnet computes their values from its
// _config, so a jsonnet user (kube-prometheus) sets them in jsonnet and gets exactly what `generate`
// would write for the same settings. The windows, `for` durations and burn factors stay the generating
// config's (regenerate for others).
//
// The thresholds are found by value: the pack is rendered with unusual sentinel thresholds, and every
// text a threshold gives (the number, in ms, in %) is replaced by its token. Rendered again with other
// sentinels, the tokenised text must be the same: a threshold in a form no token names would differ,
// and is an error here rather than a stale number in the mixin.
import type { Config } from '../config/schema.js';
import { dashboards } from '../dashboards/render-dashboards.js';
import { thresholds } from '../metrics/buckets.js';
import { msDigits, pct4Digits, pctDigits } from '../pack/figures.js';
import { templateGrouping, TOKEN } from '../pack/grouping.js';
import { ruleGroups } from '../pack/rules.js';
import { burnPairs, errorRatioThreshold, slos } from '../pack/slos.js';

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** The thresholds mixin/mixin.libsonnet takes from _config, by their _config names. */
interface MixinThresholds {
  baselineSeconds: number;
  tolerance: number;
  hitRateTarget: number;
  warmupEfficiencyTarget: number;
  minRequests: number;
  /** pack.earlyWarning.warmupDrop, pack.earlyWarning.driftAbove */
  warmupDrop: number;
  driftAbove: number;
  hitRateObjective: number;
  latencyObjective: number;
}

function mixinThresholds(config: Config): MixinThresholds {
  return {
    baselineSeconds: config.signals.baselineSeconds,
    tolerance: config.signals.tolerance,
    hitRateTarget: config.signals.hitRateTarget,
    warmupEfficiencyTarget: config.signals.warmupEfficiencyTarget,
    minRequests: config.alerts.minRequests,
    warmupDrop: config.pack.earlyWarning.warmupDrop,
    driftAbove: config.pack.earlyWarning.driftAbove,
    hitRateObjective: config.slos.hitRate.objective,
    latencyObjective: config.slos.latency.objective,
  };
}

function withThresholds(config: Config, t: MixinThresholds): Config {
  return {
    ...config,
    signals: { ...config.signals, baselineSeconds: t.baselineSeconds, tolerance: t.tolerance, hitRateTarget: t.hitRateTarget, warmupEfficiencyTarget: t.warmupEfficiencyTarget },
    alerts: { ...config.alerts, minRequests: t.minRequests },
    pack: { ...config.pack, earlyWarning: { ...config.pack.earlyWarning, warmupDrop: t.warmupDrop, driftAbove: t.driftAbove } },
    slos: { ...config.slos, hitRate: { objective: t.hitRateObjective }, latency: { objective: t.latencyObjective } },
  };
}

/**
 * Every value the generators print that a threshold decides, by the name mixin.libsonnet computes it
 * under (the same arithmetic: thresholds(), slos(), errorRatioThreshold()).
 */
function thresholdValues(config: Config): Record<string, number> {
  const t = thresholds(config.signals);
  const values: Record<string, number> = {
    baseline: t.baseline,
    ceiling: t.ceiling,
    floor: t.floor,
    tolerance: config.signals.tolerance,
    hitRateTarget: config.signals.hitRateTarget,
    warmupEfficiencyTarget: config.signals.warmupEfficiencyTarget,
    minRequests: config.alerts.minRequests,
    warmupDrop: config.pack.earlyWarning.warmupDrop,
    driftAbove: config.pack.earlyWarning.driftAbove,
  };
  burnPairs(config).forEach((pair, i) => {
    for (const slo of slos(config)) values[`limit.${slo.id}.${i}`] = errorRatioThreshold(slo, pair);
  });
  for (const slo of slos(config)) {
    values[`objective.${slo.id}`] = slo.objective;
    values[`budget.${slo.id}`] = slo.budget;
  }
  return values;
}

/** How the generators print a number (String(), and the digits of pack/figures.ts). */
const FORMATS: Record<string, (x: number) => string> = {
  plain: (x) => String(x),
  ms: msDigits,
  pct: pctDigits,
  pct4: pct4Digits,
};

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `text` with every rendering of a threshold value replaced by its token, longest first. */
function tokeniseThresholds(text: string, config: Config): string {
  const table = new Map<string, string>();
  for (const [name, value] of Object.entries(thresholdValues(config))) {
    // A count is only ever printed as itself.
    for (const [format, print] of Object.entries(FORMATS).filter(([f]) => name !== 'minRequests' || f === 'plain')) {
      const shown = print(value);
      const token = `@@${name}.${format}@@`;
      const other = table.get(shown);
      // Two tokens printing alike would be ambiguous: the sentinels are chosen so none do.
      if (other !== undefined) throw new Error(`mixin: ${token} and ${other} both print ${shown}`);
      table.set(shown, token);
    }
  }
  let out = text;
  for (const shown of [...table.keys()].sort((a, b) => b.length - a.length)) {
    out = out.replace(new RegExp(`(?<![\\w.@])${escapeRegex(shown)}(?![\\d@])`, 'g'), table.get(shown) as string);
  }
  return out;
}

/**
 * Thresholds no real config has, each printing digits no other number of the pack prints, with enough
 * digits that each of a value's forms differs (0.0062869 in % is 0.62869 to 10 digits, 0.6287 to 4).
 */
const SENTINELS: [MixinThresholds, MixinThresholds] = [
  { baselineSeconds: 0.183719, tolerance: 0.061137, hitRateTarget: 0.991373, warmupEfficiencyTarget: 0.877919, minRequests: 2137, warmupDrop: 0.0041377, driftAbove: 0.0271939, hitRateObjective: 0.9937131, latencyObjective: 0.9886713 },
  { baselineSeconds: 0.274153, tolerance: 0.043319, hitRateTarget: 0.982711, warmupEfficiencyTarget: 0.791937, minRequests: 3259, warmupDrop: 0.0062173, driftAbove: 0.0318371, hitRateObjective: 0.9955137, latencyObjective: 0.9793917 },
];

function template(config: Config, t: MixinThresholds) {
  const c = withThresholds({ ...config, pack: { ...config.pack, runbookUrl: TOKEN('runbookUrl') } }, t);
  const g = templateGrouping();
  const groups = ruleGroups(c, g);
  const recording = groups.filter((group) => group.rules.every((r) => 'record' in r));
  const alerting = groups.filter((group) => group.rules.every((r) => 'alert' in r));
  if (recording.length + alerting.length !== groups.length) throw new Error('a rule group mixes recording and alerting rules');
  const boards = Object.fromEntries(dashboards(c, g).map((d) => [`${d.uid as string}.json`, d]));
  return new Map([
    ['generated/prometheus_rules.json', tokeniseThresholds(json({ groups: recording }), c)],
    ['generated/prometheus_alerts.json', tokeniseThresholds(json({ groups: alerting }), c)],
    ['generated/dashboards.json', tokeniseThresholds(json(boards), c)],
  ]);
}

/** Relative path under mixin/ → file content. */
export function renderMixin(config: Config): Map<string, string> {
  const [a, b] = SENTINELS.map((t) => template(config, t)) as [Map<string, string>, Map<string, string>];
  for (const [file, text] of a) {
    // mixin.libsonnet splits the text on `@` to find the tokens in one pass: no other `@` may be there.
    if (text.replace(/@@[\w.-]+@@/g, '').includes('@')) throw new Error(`mixin: ${file} has an @ outside a token`);
    const other = b.get(file) as string;
    if (text !== other) {
      let i = 0;
      while (text[i] === other[i]) i++;
      throw new Error(`mixin: ${file} still depends on a threshold no token names, near: ${text.slice(Math.max(0, i - 30), i + 80)} | ${other.slice(Math.max(0, i - 30), i + 80)}`);
    }
  }
  // The _config defaults: what the rest of the pack was generated with; the burn factors for the limits.
  const defaults = {
    selector: config.pack.selector,
    aggregationLabels: config.pack.aggregationLabels,
    runbookUrl: config.pack.runbookUrl,
    ...mixinThresholds(config),
    burnFactors: burnPairs(config).map((p) => p.factor),
  };
  return new Map([['generated/config.json', json(defaults)], ...a]);
}
