// examples/zero-plane.yml says it holds "every key with its built-in default". The equality test in
// test/live/config/config-load.test.ts cannot see a missing key (the default fills it in), so this one
// walks the defaults and asks for each key in the file itself.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../../src/config/load.js';

const EXAMPLE = new URL('../../../examples/zero-plane.yml', import.meta.url);

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

/** The path of every key the defaults hold, down to values that are not plain objects (a list of keys: a key may hold a dot, as the label key kubernetes.io/metadata.name does). */
function keyPaths(value: Record<string, unknown>, prefix: string[] = []): string[][] {
  return Object.entries(value).flatMap(([k, v]) => {
    const path = [...prefix, k];
    return isPlainObject(v) && Object.keys(v).length > 0 ? [path, ...keyPaths(v, path)] : [path];
  });
}

function has(doc: unknown, path: string[]): boolean {
  let at: unknown = doc;
  for (const k of path) {
    if (!isPlainObject(at) || !(k in at)) return false;
    at = at[k];
  }
  return true;
}

describe('examples/zero-plane.yml', () => {
  it('names every key the built-in defaults hold', () => {
    const doc: unknown = parse(readFileSync(EXAMPLE, 'utf8'));
    const defaults = loadConfig(undefined) as unknown as Record<string, unknown>;
    const paths = keyPaths(defaults);
    expect(paths.length).toBeGreaterThan(50);
    expect(paths.filter((p) => !has(doc, p)).map((p) => p.join('.'))).toEqual([]);
  });
});
