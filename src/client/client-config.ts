// The `config` option of instrumentFetch(): the sections of the exporter's config the client reads
// (`headers`, `signals`, `window`, `metrics`), checked by hand with the same rules, defaults and limits
// as config/schema.ts (test/unit/client/client-config.test.ts compares the two on random input), so
// importing the client does not load zod and the exporter's schema. The exporter's other sections are
// accepted and not read, so one parsed zero-plane.yml can be given to both.
import type { Config } from '../config/schema.js';
import { LIST_CAPS, overCap } from '../config/list-caps.js';
import { parseDuration } from '../config/duration.js';
import { at, type OptionReader } from './options.js';

/** What the client reads of a Config. */
export type ClientConfig = Pick<Config, 'headers' | 'signals' | 'window' | 'metrics'>;

/** The exporter's top-level config keys the client accepts and does not read (config/schema.ts `configSchema`). */
export const UNREAD_SECTIONS = [
  'input',
  'sources',
  'parse',
  'web',
  'gate',
  'ingest',
  'pack',
  'alerts',
  'slos',
  'history',
  'dashboards',
  'alertmanager',
  'checkpoint',
  'deploy',
  'repeats',
  'probe',
] as const;
export const READ_SECTIONS = ['headers', 'signals', 'window', 'metrics'] as const;

const HEADER_NAME = { pattern: /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, means: 'an HTTP header name' };

/** The client's sections of `input` with every default filled in, or undefined after a problem (in `r`). */
export function readClientConfig(r: OptionReader, input: unknown, path = 'config'): ClientConfig | undefined {
  const c = r.object(input, path, [...READ_SECTIONS, ...UNREAD_SECTIONS]);
  if (c === undefined) return undefined;
  const headers = readHeaders(r, c.headers, at(path, 'headers'));
  const signals = readSignals(r, c.signals, at(path, 'signals'));
  const window = readWindow(r, c.window, at(path, 'window'));
  const metrics = readMetrics(r, c.metrics, at(path, 'metrics'));
  if (headers === undefined || signals === undefined || window === undefined || metrics === undefined) return undefined;
  return { headers, signals, window, metrics };
}

function headerName(r: OptionReader, o: Record<string, unknown>, path: string, fallback: string): string | undefined {
  return r.string(o.name, at(path, 'name'), fallback, HEADER_NAME);
}

function readHeaders(r: OptionReader, input: unknown, path: string): ClientConfig['headers'] | undefined {
  const h = r.object(input, path, ['layerId', 'delayProfile', 'cached', 'downgradeReason', 'optIn']);
  if (h === undefined) return undefined;
  const section = (key: string, keys: readonly string[]) => r.object(h[key], at(path, key), keys);
  const l = section('layerId', ['name', 'match']);
  const d = section('delayProfile', ['name', 'degradedMember', 'warmupMember', 'modeMember']);
  const c = section('cached', ['name', 'value']);
  const g = section('downgradeReason', ['name']);
  const o = section('optIn', ['name', 'value']);
  const layerId = l && { name: headerName(r, l, at(path, 'layerId'), 'x-anthropic-layer-id'), match: regex(r, l.match, at(path, 'layerId.match'), /^zero-plane-v[0-9]+$/) };
  const delayProfile = d && {
    name: headerName(r, d, at(path, 'delayProfile'), 'x-anthropic-delay-profile'),
    degradedMember: r.string(d.degradedMember, at(path, 'delayProfile.degradedMember'), 'degraded'),
    warmupMember: r.string(d.warmupMember, at(path, 'delayProfile.warmupMember'), 'warmup'),
    modeMember: r.string(d.modeMember, at(path, 'delayProfile.modeMember'), 'mode'),
  };
  const cached = c && { name: headerName(r, c, at(path, 'cached'), 'x-anthropic-cached'), value: r.string(c.value, at(path, 'cached.value'), 'true') };
  const downgradeReason = g && { name: headerName(r, g, at(path, 'downgradeReason'), 'x-anthropic-downgrade-reason') };
  const optIn = o && { name: headerName(r, o, at(path, 'optIn'), 'x-anthropic-experimental'), value: r.string(o.value, at(path, 'optIn.value'), 'zero-plane-2024') };
  if (!complete(layerId) || !complete(delayProfile) || !complete(cached) || !complete(downgradeReason) || !complete(optIn)) return undefined;
  return { layerId, delayProfile, cached, downgradeReason, optIn };
}

function regex(r: OptionReader, value: unknown, path: string, fallback: RegExp): RegExp | undefined {
  if (value === undefined) return fallback;
  const text = r.string(value, path, undefined);
  if (text === undefined) return undefined;
  try {
    return new RegExp(text);
  } catch (err) {
    return r.fail(path, `not a valid regular expression: ${(err as Error).message}`);
  }
}

function readSignals(r: OptionReader, input: unknown, path: string): ClientConfig['signals'] | undefined {
  const s = r.object(input, path, ['baselineSeconds', 'tolerance', 'fastTargetSeconds', 'hitRateTarget', 'warmupEfficiencyTarget', 'warmupEfficiencyBaseline', 'parseErrorRatioMax', 'stableCohorts']);
  if (s === undefined) return undefined;
  const ratio = (key: string, fallback: number) => r.number(s[key], at(path, key), fallback, { min: 0, max: 1 });
  const out = {
    baselineSeconds: r.number(s.baselineSeconds, at(path, 'baselineSeconds'), 0.185, { gt: 0 }),
    tolerance: r.number(s.tolerance, at(path, 'tolerance'), 0.05, { gt: 0, max: 1 }),
    fastTargetSeconds: r.number(s.fastTargetSeconds, at(path, 'fastTargetSeconds'), 0.12, { gt: 0 }),
    hitRateTarget: ratio('hitRateTarget', 0.994),
    warmupEfficiencyTarget: ratio('warmupEfficiencyTarget', 0.88),
    warmupEfficiencyBaseline: ratio('warmupEfficiencyBaseline', 0.917),
    parseErrorRatioMax: ratio('parseErrorRatioMax', 0.01),
    stableCohorts: list(r, s.stableCohorts, at(path, 'stableCohorts'), 'signals.stableCohorts', (v, p) => r.string(v, p, undefined)) ?? (s.stableCohorts === undefined ? ['stable'] : undefined),
  };
  return complete(out) ? out : undefined;
}

function readWindow(r: OptionReader, input: unknown, path: string): ClientConfig['window'] | undefined {
  const w = r.object(input, path, ['duration', 'slot', 'quantileRelativeAccuracy']);
  if (w === undefined) return undefined;
  const out = {
    duration: configDuration(r, w.duration, at(path, 'duration'), 300_000),
    slot: configDuration(r, w.slot, at(path, 'slot'), 10_000),
    quantileRelativeAccuracy: r.number(w.quantileRelativeAccuracy, at(path, 'quantileRelativeAccuracy'), 0.0025, { gt: 0, max: 0.005 }),
  };
  if (!complete(out)) return undefined;
  if (out.duration % out.slot !== 0 || out.duration / out.slot > 3600) return r.fail(path, '`duration` must be a whole multiple of `slot`, at most 3600 slots');
  return out;
}

function readMetrics(r: OptionReader, input: unknown, path: string): ClientConfig['metrics'] | undefined {
  const m = r.object(input, path, ['histogramBuckets', 'labelValueLimit', 'downgradeReasonLimit', 'labelValueMaxBytes', 'maxSeriesPerFamily']);
  if (m === undefined) return undefined;
  const histogramBuckets = list(r, m.histogramBuckets, at(path, 'histogramBuckets'), 'metrics.histogramBuckets', (v, p) => r.number(v, p, undefined, { gt: 0 }));
  const out = {
    labelValueLimit: r.number(m.labelValueLimit, at(path, 'labelValueLimit'), 50, { int: true, min: 1 }),
    downgradeReasonLimit: r.number(m.downgradeReasonLimit, at(path, 'downgradeReasonLimit'), 20, { int: true, min: 1 }),
    labelValueMaxBytes: r.number(m.labelValueMaxBytes, at(path, 'labelValueMaxBytes'), 128, { int: true, min: 16, max: 4096 }),
    maxSeriesPerFamily: r.number(m.maxSeriesPerFamily, at(path, 'maxSeriesPerFamily'), 1000, { int: true, min: 100, max: 1_000_000 }),
  };
  if (!complete(out) || (m.histogramBuckets !== undefined && histogramBuckets === undefined)) return undefined;
  return histogramBuckets === undefined ? out : { histogramBuckets, ...out };
}

/** A config duration: a string only, as in the YAML ("5m"), in milliseconds. */
function configDuration(r: OptionReader, value: unknown, path: string, fallback: number): number | undefined {
  if (value === undefined) return fallback;
  const text = r.string(value, path, undefined);
  if (text === undefined) return undefined;
  const ms = parseDuration(text);
  return ms === undefined || ms <= 0 ? r.fail(path, `"${text}" is not a duration such as 250ms, 10s, 5m or 1h`) : ms;
}

/** A list within its cap (config/list-caps.ts), each item read by `item`; undefined when absent or after a problem. */
function list<T>(r: OptionReader, value: unknown, path: string, cap: keyof typeof LIST_CAPS, item: (v: unknown, path: string) => T | undefined): T[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) return r.fail(path, `expected a list, got ${value === null ? 'null' : typeof value}`);
  if (value.length > LIST_CAPS[cap]) return r.fail(path, overCap(cap));
  // Array.from visits holes too; an item read with no fallback would read undefined as absent, not as an error.
  const items = Array.from(value as unknown[], (v, i) => (v === undefined ? r.fail(`${path}.${i}`, 'expected a value, got undefined') : item(v, `${path}.${i}`)));
  return items.every((v) => v !== undefined) ? (items as T[]) : undefined;
}

type Complete<T> = { [K in keyof T]-?: Exclude<T[K], undefined> };

/** Whether every value read is there (none failed). */
function complete<T extends object>(o: T | undefined): o is Complete<T> & T {
  return o !== undefined && Object.values(o).every((v) => v !== undefined);
}
