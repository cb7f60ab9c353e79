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
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
