// The early-warning and capacity rules follow the config: their thresholds and windows, the aggregation labels
// of every join, and the checks that keep a config from asking for a warning the hard alerts already give.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { defaultConfig } from '../../../src/config/schema.js';
import { earlyWarningRules, earlyWarningSpecs } from '../../../src/pack/early-warning.js';
import { groupingOf } from '../../../src/pack/grouping.js';

const refused = (text: string) => {
  try {
    parseConfig(text, 'zp.yml');
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error(`accepted:\n${text}`);
};

describe('early warnings and capacity', () => {
  it('the defaults: 1h levels, the 7d warm-up level on an hourly step, max24h, 0.5 points and +3 %', () => {
    const c = defaultConfig();
    const rules = earlyWarningRules(c, groupingOf(c));
    const byName = new Map(rules.map((r) => [r.record, r.expr]));
    expect(byName.get('zero_plane:warmup_efficiency:ratio_rate7d')).toContain('[7d:1h]');
    expect(byName.get('zero_plane:p99_drift:max24h')).toBe('max_over_time(zero_plane:p99_drift:ratio_rate5m[24h])');
    expect(byName.get('zero_plane:deterministic_bandwidth_demand:rate5m')).toBe('(1 + zero_plane:p99_drift:max24h)\n* on (job)\nzero_plane:requests:rate5m');
    const [sliding, creeping] = earlyWarningSpecs(c, groupingOf(c));
    expect(sliding?.expr).toContain('(zero_plane:warmup_efficiency:ratio_rate7d - 0.005)');
    expect(sliding?.expr).toContain('(zero_plane:warmup_efficiency:ratio_rate1h >= 0.88)');
    expect(creeping?.expr).toContain('(zero_plane:p99_drift:ratio_rate1h > 0.03)');
    expect(creeping?.expr).toContain('(zero_plane:p99_drift:ratio_rate1h <= 0.05)');
  });

  it('every threshold and window is the config’s, and every join keeps the aggregation labels', () => {
    const c = parseConfig(
      'pack:\n  aggregationLabels: [cluster, namespace, job]\n  capacityWindow: 12h\n  earlyWarning: { window: 30m, baselineWindow: 14d, warmupDrop: 0.01, driftAbove: 0.04 }\nalerts:\n  minRequests: 500\n',
      'zp.yml',
    );
    const g = groupingOf(c);
    const text = JSON.stringify([earlyWarningRules(c, g), earlyWarningSpecs(c, g)]);
    for (const s of ['ratio_rate30m', 'ratio_rate14d', '[14d:30m]', 'max12h', '[12h]', '- 0.01)', '> 0.04)', '* 1800 >= 500)']) expect(text).toContain(s);
    expect(text).not.toContain('rate1h');
    const joins = [...text.matchAll(/\b(by|on) \(([^)]*)\)/g)].map((m) => m[2] as string);
    expect(joins.length).toBeGreaterThan(8);
    for (const j of joins) expect(j.startsWith('cluster, namespace, job'), j).toBe(true);
  });

  it('refuses a creeping level at or past the band, a baseline that is not a multiple of the window, a window no longer than the rate window', () => {
    expect(refused('pack:\n  earlyWarning: { driftAbove: 0.05 }\n')).toMatch(/zp\.yml:2: pack\.earlyWarning\.driftAbove: must be below signals\.tolerance/);
    expect(refused('pack:\n  earlyWarning: { baselineWindow: 90m }\n')).toMatch(/zp\.yml:2: pack\.earlyWarning\.baselineWindow: must be a whole multiple/);
    expect(refused('pack:\n  earlyWarning: { window: 5m }\n')).toMatch(/zp\.yml:2: pack\.earlyWarning\.window: must be longer than pack\.rateWindow \(5m\)/);
    expect(refused('pack:\n  earlyWarning: { warmupDrop: 0 }\n')).toMatch(/pack\.earlyWarning\.warmupDrop/);
  });
});
