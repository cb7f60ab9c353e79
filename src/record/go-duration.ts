// Go's time.Duration as gateways and Go exporters write it (Traefik's Duration, the exporter toolkit's
// rate_limit.interval). In record/, the lowest room that reads one; server/web-config.ts reads it too.

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
