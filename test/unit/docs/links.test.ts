// The README is a front door to docs/: every relative link and #anchor in README.md and docs/*.md must
// land (the file exists, the heading is there under GitHub's anchor), every docs page must be reachable
// from the README, and every path the docs name under src/, test/ or bench/ must exist (tests moved into
// test/unit/<area>/ and test/live/<area>/; a stale flat test/foo.test.ts is a dead end for a reader).
// The docs/X.md#anchor pointers that messages in src/ print are held to the same rule.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { anchors, linesWithFences, links } from '../../helpers/markdown.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DOCS = join(ROOT, 'docs');
const README = join(ROOT, 'README.md');
const PAGES = [
  README,
  ...readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .map((f) => join(DOCS, f)),
];

const anchorCache = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  let a = anchorCache.get(file);
  if (a === undefined) {
    a = anchors(readFileSync(file, 'utf8'));
    anchorCache.set(file, a);
  }
  return a;
}

/** What is wrong with `target` linked from `from`, or undefined when it resolves. */
function problem(from: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return undefined; // https:, mailto: — not this repository's
  const [path, anchor] = target.split('#', 2) as [string, string | undefined];
  const file = path === '' ? from : resolve(dirname(from), decodeURIComponent(path));
  if (!file.startsWith(ROOT)) return `${target} leaves the repository`;
  if (!existsSync(file)) return `${target}: no such file`;
  if (anchor === undefined || anchor === '') return undefined;
  if (!file.endsWith('.md') || statSync(file).isDirectory()) return `${target}: an anchor into a file that is not Markdown`;
  return anchorsOf(file).has(anchor) ? undefined : `${target}: no heading with the anchor #${anchor} in ${relative(ROOT, file)}`;
}

describe('README.md and docs/*.md', () => {
  it('has pages to check', () => {
    expect(PAGES.length).toBeGreaterThan(15);
  });

  it.each(PAGES.map((p) => [relative(ROOT, p), p]))('every relative link and anchor of %s resolves', (_name, page) => {
    const found = links(readFileSync(page, 'utf8'));
    const broken = found.flatMap((l) => {
      const p = problem(page, l.target);
      return p === undefined ? [] : [`line ${l.line}: ${p}`];
    });
    expect(broken).toEqual([]);
  });

  it('links every docs page from the README', () => {
    const linked = new Set(
      links(readFileSync(README, 'utf8'))
        .map((l) => l.target.split('#')[0] as string)
        .filter((t) => t.startsWith('docs/'))
        .map((t) => resolve(ROOT, t)),
    );
    const unlinked = PAGES.filter((p) => p !== README && !linked.has(p)).map((p) => relative(ROOT, p));
    expect(unlinked).toEqual([]);
  });

  it('keeps the README a front door: at most 420 lines, with a table of contents whose links land', () => {
    const text = readFileSync(README, 'utf8');
    expect(text.split('\n').length).toBeLessThanOrEqual(420);
    const contents = text.slice(text.indexOf('## Contents'), text.indexOf('\n## ', text.indexOf('## Contents') + 1));
    const entries = links(contents);
    expect(entries.length).toBeGreaterThanOrEqual(5);
    for (const e of entries) expect(problem(README, e.target), e.target).toBeUndefined();
  });

  it.each(PAGES.map((p) => [relative(ROOT, p), p]))('every path %s names under src/, test/ or bench/ exists', (_name, page) => {
    const missing: string[] = [];
    for (const { line, number } of linesWithFences(readFileSync(page, 'utf8'))) {
      // A path starts a word (not `docs/src/…` or a URL's path) and stops before a placeholder (`<area>`, `NAME`, `…`, `*`).
      for (const m of line.matchAll(/(?<![\w./-])(?:src|test|bench)\/[\w./-]*/g)) {
        const after = line[(m.index ?? 0) + m[0].length] ?? '';
        const path = m[0].replace(/[.]+$/, '');
        if ('<*…{'.includes(after) && after !== '') continue;
        if (/(^|\/)[A-Z]+(\.|$)/.test(path.split('/').pop() ?? '') && !existsSync(join(ROOT, path))) continue; // NAME.ndjson, SHAPE
        if (!existsSync(join(ROOT, path))) missing.push(`line ${number}: ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('docs pointers in src/ messages', () => {
  function sources(dir: string): string[] {
    return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
  }

  it('every docs/PAGE.md#anchor that src/ names resolves, and src/ points at no README section', () => {
    const pointers: string[] = [];
    const broken: string[] = [];
    const readme: string[] = [];
    for (const file of sources(join(ROOT, 'src'))) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?<![\w/.])docs\/[\w-]+\.md(?:#[\w-]+)?/g)) {
        pointers.push(m[0]);
        const p = problem(README, m[0]);
        if (p !== undefined) broken.push(`${relative(ROOT, file)}: ${p}`);
      }
      if (/\bREADME\b/.test(text)) readme.push(relative(ROOT, file));
    }
    expect(pointers.length).toBeGreaterThan(10);
    expect(broken).toEqual([]);
    expect(readme).toEqual([]);
  });
});
