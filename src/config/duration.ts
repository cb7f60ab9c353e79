// Prometheus-style durations ("250ms", "5m", "1h30m"), the format SREs already write in rule files.

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;
const WHOLE = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/;

/** Milliseconds for a duration string, or undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  if (!WHOLE.test(text)) return undefined;
  let total = 0;
  for (const m of text.matchAll(PART)) total += Number(m[1]) * (UNIT_MS[m[2] as string] as number);
  return total;
}

/** The shortest Prometheus duration string for a whole number of milliseconds ("5m", "90s", "250ms"). */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1_000]] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

const GO_UNIT_NS: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, μs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
const GO_PART = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/gy;

/**
 * Nanoseconds for a Go `time.Duration` as Go exporters' YAML holds it (the exporter toolkit's
 * `rate_limit.interval`): a string for time.ParseDuration ("1s", "1m30s", "250ms", "0"), or a number
 * of nanoseconds. Undefined when it is neither, or negative.
 */
export function parseGoDuration(value: string | number): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 ? value : undefined;
  if (value === '0') return 0;
  if (value === '') return undefined;
  GO_PART.lastIndex = 0;
  let total = 0;
  let at = 0;
  for (let m = GO_PART.exec(value); m !== null; m = GO_PART.exec(value)) {
    total += Number(m[1]) * (GO_UNIT_NS[m[2] as string] as number);
    at = GO_PART.lastIndex;
  }
  return at === value.length ? Math.round(total) : undefined;
}
