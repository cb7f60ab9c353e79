// Burn factors follow slos.period by the workbook's budget shares (factor = share × period / long
// window), as Sloth's 28-day and 30-day window sets have them; a burn-rate pair compares the error ratio
// with factor × budget rounded to the decimal, so a ratio exactly on it compares alike for every SLO.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { burnPairs, errorRatioThreshold, promDuration, slos } from '../../../src/pack/slos.js';

const factors = (yaml: string) => burnPairs(parseConfig(yaml, 'slo.yml')).map((p) => p.factor);

describe('burn factors', () => {
  it('over the default 28d: 13.44, 5.6, 2.8, 0.9333 (Sloth google-28d); over 30d: 14.4, 6, 3, 1 (google-30d)', () => {
    expect(factors('')).toEqual([13.44, 5.6, 2.8, 0.933333333333]);
    expect(factors('slos:\n  period: 30d\n')).toEqual([14.4, 6, 3, 1]);
  });

  it('a configured factor is used as given, beside shares', () => {
    expect(factors('slos:\n  page: [{ factor: 14.4, long: 1h, short: 5m }]\n  ticket: [{ budgetShare: 0.1, long: 1d, short: 2h }]\n')).toEqual([14.4, 2.8]);
  });

  it('the compared error ratio is the decimal factor × budget, not float noise', () => {
    const config = parseConfig('slos:\n  period: 30d\n', 'slo.yml');
    const [hitRate, latency] = slos(config);
    const [page] = burnPairs(config);
    if (!hitRate || !latency || !page) throw new Error('no SLO');
    expect(14.4 * 0.01).toBe(0.14400000000000002);
    expect(errorRatioThreshold(latency, page)).toBe(0.144);
    expect(errorRatioThreshold(hitRate, page)).toBe(0.0864);
    // 432 of 3 000 and 216 of 2 500 sit exactly on it: neither is above (`>`), and both compare alike
    // (as ratio / budget against the factor, 432 / 3 000 gave 14.399999999999999 and 216 / 2 500 14.4).
    expect(432 / 3000 > errorRatioThreshold(latency, page)).toBe(false);
    expect(216 / 2500 > errorRatioThreshold(hitRate, page)).toBe(false);
    expect(433 / 3000 > errorRatioThreshold(latency, page)).toBe(true);
    expect(217 / 2500 > errorRatioThreshold(hitRate, page)).toBe(true);
  });
});

describe('promDuration (Prometheus model.Duration spelling, as Sloth names its windows)', () => {
  it('whole weeks as w, else days and smaller', () => {
    expect(promDuration(28 * 86_400_000)).toBe('4w');
    expect(promDuration(30 * 86_400_000)).toBe('30d');
    expect(promDuration(300_000)).toBe('5m');
    expect(promDuration(90 * 60_000)).toBe('1h30m');
    expect(promDuration(3 * 86_400_000)).toBe('3d');
  });
});
