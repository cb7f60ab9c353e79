// What the README promises a newcomer, held to the repository: the apt line installs what .ci/run installs
// (a shorter list fails tests on a fresh machine), the nginx block of the five-minute path is the one the
// real-gateway tests run (docs/gateways.md), and nothing users read points at a spec the repository
// does not contain (docs/contract.md is the contract).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { blockUnder } from '../../helpers/markdown.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

describe('README.md', () => {
  it('names on its apt line every Debian package .ci/run installs, and no other', () => {
    const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8');
    const needed = new Set([...ci.matchAll(/missing\+=\(([\w.+-]+)\)/g)].map((m) => m[1] as string));
    expect(needed.size).toBeGreaterThanOrEqual(10);
    const apt = /sudo apt-get install ([^\n`]+)/.exec(readme);
    expect(apt, 'an apt-get install line').not.toBeNull();
    const listed = (apt?.[1] ?? '')
      .trim()
      .split(/\s+/)
      .filter((w) => !w.startsWith('-'));
    expect(new Set(listed)).toEqual(needed);
    expect(listed.length).toBe(needed.size);
  });

  it('shows the nginx log_format that docs/gateways.md documents and the real-nginx tests run', () => {
    const gateways = readFileSync(join(ROOT, 'docs/gateways.md'), 'utf8');
    const documented = blockUnder(gateways, '## nginx', 'nginx');
    const shown = blockUnder(readme, '### nginx on a host', 'nginx');
    expect(documented).toContain('log_format zero_plane escape=json');
    expect(shown).toBe(documented);
  });

  it('runs the demo and the tests with the two commands it names', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(readme).toContain('npm ci && npm start');
    expect(pkg.scripts.start).toMatch(/zero-plane-exporter\.js demo$/);
    expect(readme).toMatch(/^npm test\b/m);
    expect(pkg.scripts.test).toMatch(/vitest run$/);
  });
});

describe('what users read', () => {
  function files(dir: string, ext: string): string[] {
    return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name), ext) : e.name.endsWith(ext) ? [join(dir, e.name)] : []));
  }

  it('never points at "the SPEC": README, docs/ and src/ (help texts, messages, comments) point at docs/contract.md', () => {
    const offenders = [join(ROOT, 'README.md'), ...files(join(ROOT, 'docs'), '.md'), ...files(join(ROOT, 'src'), '.ts')].flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .flatMap((line, i) => (/\bSPEC\b/.test(line) ? [`${f.slice(ROOT.length)}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(offenders).toEqual([]);
  });
});
