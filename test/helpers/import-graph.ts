// The import graph of src/: every relative module specifier of every src/**/*.ts file, read with the
// TypeScript compiler's parser (static imports and re-exports, `import type`, dynamic `import()`, and
// `typeof import()` in types), so the layer check sees what the compiler sees. docs/architecture.md
// states the layer order the check holds the graph to.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

export interface ImportEdge {
  /** Importing file, relative to src/ with forward slashes: `record/presets.ts`. */
  from: string;
  /** Imported file, relative to src/: `config/schema.ts`. */
  to: string;
  /** 1-based line of the specifier in `from`. */
  line: number;
  /** Only types cross (`import type`, `typeof import()`): still an arrow the layers must allow. */
  typeOnly: boolean;
}

/** Every .ts file under `dir`, relative to it, forward slashes, sorted. */
function tsFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) out.push(relative(dir, p).split(sep).join('/'));
    }
  };
  walk(dir);
  return out.sort();
}

/** The relative specifiers one file names, with where and whether only types cross. */
function specifiers(fileName: string, text: string): { spec: string; line: number; typeOnly: boolean }[] {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: { spec: string; line: number; typeOnly: boolean }[] = [];
  const add = (lit: ts.Node, typeOnly: boolean): void => {
    if (!ts.isStringLiteralLike(lit) || !lit.text.startsWith('.')) return;
    found.push({ spec: lit.text, line: sf.getLineAndCharacterOfPosition(lit.getStart(sf)).line + 1, typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      // `import { type A, type B } from` carries only types too.
      const allTypeSpecifiers =
        clause !== undefined &&
        clause.name === undefined &&
        clause.namedBindings !== undefined &&
        ts.isNamedImports(clause.namedBindings) &&
        clause.namedBindings.elements.length > 0 &&
        clause.namedBindings.elements.every((el) => el.isTypeOnly);
      add(node.moduleSpecifier, clause?.isTypeOnly === true || allTypeSpecifiers);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined) {
      add(node.moduleSpecifier, node.isTypeOnly);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node.moduleReference.expression, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] !== undefined) {
      add(node.arguments[0], false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/**
 * The edges between src/ files. A specifier is resolved as NodeNext writes it (`./x.js` is `./x.ts`);
 * one that names no file under src/ is an error, so a typo cannot hide an edge.
 */
export function importEdges(srcDir: string): { files: string[]; edges: ImportEdge[] } {
  const files = tsFiles(srcDir);
  const known = new Set(files);
  const edges: ImportEdge[] = [];
  for (const from of files) {
    const abs = join(srcDir, from);
    for (const { spec, line, typeOnly } of specifiers(abs, readFileSync(abs, 'utf8'))) {
      const target = relative(srcDir, resolve(dirname(abs), spec.replace(/\.js$/, '.ts')))
        .split(sep)
        .join('/');
      if (!known.has(target)) throw new Error(`src/${from}:${line} imports ${spec}, which is no file under src/ (${target})`);
      edges.push({ from, to: target, line, typeOnly });
    }
  }
  return { files, edges };
}

/** The room a file lives in: its top folder under src/, or the file's own name for a file at the top (`pipeline`). */
export function roomOf(file: string): string {
  const slash = file.indexOf('/');
  return slash === -1 ? file.replace(/\.ts$/, '') : file.slice(0, slash);
}

/** "src/a.ts:3 -> src/b.ts (type only)" */
export function describeEdge(e: ImportEdge): string {
  return `src/${e.from}:${e.line} -> src/${e.to}${e.typeOnly ? ' (type only)' : ''}`;
}

/**
 * Each edge that crosses rooms without running down: the target's room must rank strictly lower. Two
 * rooms of one rank are siblings and may not import each other. A room in no rank is itself a finding.
 */
export function layerViolations(edges: readonly ImportEdge[], files: readonly string[], layers: readonly (readonly string[])[]): string[] {
  const rank = new Map<string, number>();
  layers.forEach((rooms, i) => {
    for (const room of rooms) rank.set(room, i);
  });
  const problems: string[] = [];
  for (const room of new Set(files.map(roomOf))) {
    if (!rank.has(room)) problems.push(`src/${room} is in no layer: add it to the rank list (test/unit/house/import-graph.test.ts) and docs/architecture.md`);
  }
  for (const e of edges) {
    const a = roomOf(e.from);
    const b = roomOf(e.to);
    if (a === b) continue;
    const ra = rank.get(a);
    const rb = rank.get(b);
    if (ra === undefined || rb === undefined) continue;
    if (rb > ra) problems.push(`upward: ${describeEdge(e)} (${a} is layer ${ra}, ${b} is layer ${rb})`);
    else if (rb === ra) problems.push(`sideways: ${describeEdge(e)} (${a} and ${b} are siblings in layer ${ra})`);
  }
  return problems;
}

/**
 * The import cycles between files (Tarjan's strongly connected components of more than one file, or a
 * file importing itself), each as the files in it.
 */
export function fileCycles(edges: readonly ImportEdge[], files: readonly string[]): string[][] {
  const out = new Map<string, string[]>(files.map((f) => [f, []]));
  for (const e of edges) out.get(e.from)?.push(e.to);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let next = 0;
  const connect = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of out.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (out.get(v) ?? []).includes(v)) cycles.push(component.sort());
    }
  };
  for (const f of files) if (!index.has(f)) connect(f);
  return cycles;
}

/** The edges inside one cycle, to name in a failure. */
export function cycleEdges(edges: readonly ImportEdge[], cycle: readonly string[]): ImportEdge[] {
  const members = new Set(cycle);
  return edges.filter((e) => members.has(e.from) && members.has(e.to));
}
