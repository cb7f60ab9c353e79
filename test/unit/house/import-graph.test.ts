// The house (docs/architecture.md): imports run only down the layers, never sideways between siblings,
// and no files import each other in a loop. A failure names each offending edge with file and line.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cycleEdges, describeEdge, fileCycles, importEdges, layerViolations } from '../../helpers/import-graph.js';
import { tempDir } from '../../helpers/temp-dir.js';

const SRC = fileURLToPath(new URL('../../../src/', import.meta.url));

/**
 * The rank list, bottom first: a room (a folder of src/, or `pipeline` for src/pipeline.ts) imports only
 * rooms of a lower rank. Rooms of one rank are siblings and never import each other. Keep in step with
 * docs/architecture.md.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['fs', 'code-unit-order'], // 0  atomic file writes; the one string order of sorted output
  ['source'], // 1  bytes → lines: followers, envelopes
  ['record'], // 2  lines → records: presets, parsing, detection
  ['config'], // 3  the schema, read by every room above
  ['signals'], // 4  a record → its signals
  ['windows'], // 5  signals over a sliding window
  ['metrics'], // 6  windows and counters → Prometheus families
  ['pipeline', 'pack', 'simulate', 'probe'], // 7  the wired pipeline; the rule pack; the fake API; the synthetic probe
  ['server', 'history', 'report', 'dashboards', 'loadgen', 'pipeline-delta'], // 8
  ['gate', 'ingest', 'checkpoint', 'deploy', 'mixin'], // 9
  ['landing'], // 10 the landing page: shows the gate, drives the simulator, offers the pack
  ['client'], // 11 the in-process client library (package entry point ./client)
  ['cli'], // 12 the thin shell on top
];

describe('the import graph of src/', () => {
  const { files, edges } = importEdges(SRC);

  it('reads the real tree (a parser that finds nothing would pass everything)', () => {
    expect(files.length).toBeGreaterThan(100);
    expect(edges.length).toBeGreaterThan(300);
    // One known edge of each kind the parser must see.
    expect(edges).toContainEqual(expect.objectContaining({ from: 'pipeline.ts', to: 'record/parse-record.ts' }));
    expect(edges.some((e) => e.typeOnly)).toBe(true);
  });

  it('runs only down the layers: no upward or sideways edge, no room left out', () => {
    expect(layerViolations(edges, files, LAYERS)).toEqual([]);
  });

  it('has no cycle between files', () => {
    const named = fileCycles(edges, files).map((c) => `cycle of ${c.length}: ${cycleEdges(edges, c).map(describeEdge).join('; ')}`);
    expect(named).toEqual([]);
  });
});

describe('the checker', () => {
  /** A small src/ tree: path → content. */
  function tree(filesByPath: Record<string, string>): string {
    const root = tempDir('import-graph-');
    for (const [path, text] of Object.entries(filesByPath)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    return root;
  }

  it('names an upward edge, a sideways edge and a room in no layer, with file and line', () => {
    const root = tree({
      'low/a.ts': "export const a = 1;\nimport { h } from '../high/h.js';\n",
      'high/h.ts': "import { a } from '../low/a.js';\nexport const h = a;\n",
      'high/side.ts': "export type S = typeof import('../peer/p.js');\n",
      'peer/p.ts': 'export const p = 1;\n',
      'stray/s.ts': 'export {};\n',
    });
    const { files, edges } = importEdges(root);
    expect(layerViolations(edges, files, [['low'], ['high', 'peer']])).toEqual([
      'src/stray is in no layer: add it to the rank list (test/unit/house/import-graph.test.ts) and docs/architecture.md',
      'sideways: src/high/side.ts:1 -> src/peer/p.ts (type only) (high and peer are siblings in layer 1)',
      'upward: src/low/a.ts:2 -> src/high/h.ts (low is layer 0, high is layer 1)',
    ]);
  });

  it('finds a cycle through type-only and dynamic imports, and none in a chain', () => {
    const root = tree({
      'x/a.ts': "import type { B } from './b.js';\nexport type A = B;\n",
      'x/b.ts': "export type B = number;\nexport const load = () => import('./a.js');\n",
      'x/c.ts': "export { type B } from './b.js';\n",
    });
    const { files, edges } = importEdges(root);
    const cycles = fileCycles(edges, files);
    expect(cycles).toEqual([['x/a.ts', 'x/b.ts']]);
    expect(cycleEdges(edges, cycles[0] as string[]).map(describeEdge)).toEqual(['src/x/a.ts:1 -> src/x/b.ts (type only)', 'src/x/b.ts:2 -> src/x/a.ts']);
  });

  it('refuses a specifier that names no file, so a typo cannot hide an edge', () => {
    const root = tree({ 'x/a.ts': "import { b } from './missing.js';\n" });
    expect(() => importEdges(root)).toThrow('src/x/a.ts:1 imports ./missing.js, which is no file under src/');
  });
});
