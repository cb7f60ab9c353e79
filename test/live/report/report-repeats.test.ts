// `report` on a log whose records carry prompt hashes (test/fixtures/repeats/questions.ndjson, 25 lines:
// hash 1…1 ×6 of which 4 cached, 2…2 ×4 (1 cached), 3…3 ×3 (0), 4…4 ×2 (2), eight more once each, and two
// lines without a hash): the JSON `repeats` section and the text rows, the same on one thread and on two
// (the top-k of each half merged); a log without any hash has no `repeats` key at all.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BIN } from '../../helpers/cli-process.js';

const FIXTURE = fileURLToPath(new URL('../../fixtures/repeats/questions.ndjson', import.meta.url));
const NO_HASHES = fileURLToPath(new URL('../../golden/healthy-window.ndjson', import.meta.url));

function report(args: string[], env: Record<string, string> = {}): { code: number | null; stdout: string } {
  const r = spawnSync(process.execPath, [BIN, 'report', ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 30_000 });
  return { code: r.status, stdout: r.stdout };
}

const H = (c: string) => c.repeat(32);
const row = (rank: number, c: string, count: number, cached: number) => ({ rank, hash: H(c), count, error: 0, cached, cachedShare: cached / count });

/** Worked out from the fixture's description above, not from the program's output. */
const EXPECTED = {
  requests: 23,
  cached: 7,
  cachedShare: 7 / 23,
  k: 1000,
  // Ties (the once-asked hashes) in hash order: 5…5 to a…a make the last six of the ten.
  top: [row(1, '1', 6, 4), row(2, '2', 4, 1), row(3, '3', 3, 0), row(4, '4', 2, 2), ...['5', '6', '7', '8', '9', 'a'].map((c, i) => row(5 + i, c, 1, 0))],
};

describe('report: repeated prompts', () => {
  it.each([
    ['one thread', {}],
    ['two threads', { ZP_REPORT_PARALLEL_MIN_BYTES: '0' }],
  ])('prints the top 10 with counts and cached shares in JSON (%s)', (_name, env) => {
    const r = report(['--format', 'json', FIXTURE], env);
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout) as { records: number; cachedCount: number; repeats: unknown };
    expect(json.records).toBe(25);
    expect(json.cachedCount).toBe(8);
    expect(json.repeats).toEqual(EXPECTED);
  });

  it('prints the same rows as text', () => {
    const r = report([FIXTURE]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('repeated prompts: 23 requests with a prompt hash, 30.4 % cached; top 10:');
    expect(r.stdout).toMatch(new RegExp(`\\n +1 ${H('1')} +6 +66\\.7 %\\n +2 ${H('2')} +4 +25\\.0 %\\n`));
    expect(r.stdout).toMatch(new RegExp(`\\n +4 ${H('4')} +2 +100\\.0 %\\n`));
    expect(r.stdout).toMatch(new RegExp(`\\n +10 ${H('a')} +1 +0\\.0 %\\n`));
    expect(r.stdout).not.toContain(H('b'));
  });

  it('a log without prompt hashes has no repeats section', () => {
    const r = report(['--format', 'json', NO_HASHES]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).not.toHaveProperty('repeats');
    expect(report([NO_HASHES]).stdout).not.toContain('repeated prompts');
  });
});
