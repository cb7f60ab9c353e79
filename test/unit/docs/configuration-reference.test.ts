// docs/configuration.md says it lists every config key with its default. This walks the built-in defaults
// (src/config/schema.ts, as loadConfig gives them) and asks, for each key, for a table row that names it
// and shows its default as written in YAML (a duration as 5m, a list by its elements), so a new key or
// a changed default cannot leave the reference behind. Keys the page names must exist in the schema too.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { formatDuration } from '../../../src/config/duration.js';
import { configSchema } from '../../../src/config/schema.js';

const PAGE = readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8');

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

/** Every leaf key of the defaults (a value that is not a non-empty plain object) as its path of keys, with its value. */
function leaves(value: Record<string, unknown>, prefix: string[] = []): [string[], unknown][] {
  return Object.entries(value).flatMap(([k, v]) => (isPlainObject(v) && Object.keys(v).length > 0 ? leaves(v, [...prefix, k]) : [[[...prefix, k], v] as [string[], unknown]]));
}

/** The table rows of the page: key → its default cell. */
function rows(): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of PAGE.split('\n')) {
    const m = /^\| `([\w.-]+)` \| (.*?) \| .*\|$/.exec(line);
    if (m !== null) out.set(m[1] as string, m[2] as string);
  }
  return out;
}

/** A whole number of ms as a duration (`5m`, or `4h15m` when one unit does not do), and as an RFC 3339 time (the schema holds instants as epoch ms). */
function asDuration(ms: number): string[] {
  let rest = ms;
  let parts = '';
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
    ['ms', 1],
  ] as const) {
    if (rest >= size) {
      parts += `${Math.floor(rest / size)}${unit}`;
      rest %= size;
    }
  }
  return [formatDuration(ms), parts, new Date(ms).toISOString().replace('.000Z', 'Z')];
}

/** The spellings a default may have in the page: numbers also as a duration (the schema holds durations as ms). */
function spellings(v: unknown): string[][] {
  if (Array.isArray(v)) return v.length === 0 ? [['[]']] : v.flatMap((e) => (isPlainObject(e) ? Object.values(e).map((x) => spellings(x).flat()) : spellings(e)));
  if (v instanceof RegExp) return [[v.source]];
  if (isPlainObject(v)) return [['{}']];
  if (typeof v === 'number') return [[String(v), ...(v === 0 ? ['0s'] : []), ...(Number.isInteger(v) && v > 0 ? asDuration(v) : [])]];
  return [[String(v)]];
}

describe('docs/configuration.md', () => {
  const table = rows();
  const defaults = leaves(loadConfig(undefined) as unknown as Record<string, unknown>);

  it('has a row for every key of the built-in defaults, showing that default', () => {
    expect(defaults.length).toBeGreaterThan(100);
    const problems: string[] = [];
    for (const [path, value] of defaults) {
      const key = path.join('.');
      // The key's own row, or the row of an object above it whose default shows it (a map such as
      // networkPolicy.monitoringNamespaceSelector, whose label keys hold dots themselves).
      const depth = [...path.keys()].reverse().find((i) => table.has(path.slice(0, i + 1).join('.')));
      if (depth === undefined) {
        problems.push(`${key}: no row`);
        continue;
      }
      const cell = table.get(path.slice(0, depth + 1).join('.')) as string;
      const within = path.slice(depth + 1).join('.');
      if (within !== '' && !cell.includes(within)) problems.push(`${key}: "${within}" not in "${cell}"`);
      // Every element (of a list, or of each object in it) must show, in one of its spellings.
      for (const options of spellings(value)) if (!options.some((s) => cell.includes(s))) problems.push(`${key}: default ${JSON.stringify(value)} not in "${cell}"`);
    }
    expect(problems).toEqual([]);
  });

  it('names no key the schema does not have (the optional ones are unset by default)', () => {
    const known = new Set(defaults.flatMap(([path]) => path.map((_, i) => path.slice(0, i + 1).join('.'))));
    const unknown = [...table.entries()].filter(([k, cell]) => !known.has(k) && cell !== 'unset' && cell !== '');
    expect(unknown).toEqual([]);
    // An "unset" key is one the schema knows: setting it is never an unknown-key error.
    const unset = [...table.entries()].filter(([, cell]) => cell === 'unset').map(([k]) => k);
    expect(unset.length).toBeGreaterThanOrEqual(5);
    for (const key of unset) {
      expect(known.has(key), `${key} has a default, yet the page says unset`).toBe(false);
      const config: Record<string, unknown> = {};
      const steps = key.split('.');
      let at = config;
      for (const step of steps.slice(0, -1)) at = (at[step] = {}) as Record<string, unknown>;
      at[steps[steps.length - 1] as string] = 'x';
      const result = configSchema.safeParse(config);
      const unrecognized = result.success ? [] : result.error.issues.filter((i) => i.code === 'unrecognized_keys');
      expect(unrecognized, key).toEqual([]);
    }
  });
});
