// The command line contract of SPEC §8: flags, help, exit codes, error messages.
import { writeFileSync } from 'node:fs';
import { tempDir } from '../../helpers/temp-dir.js';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli-process.js';

const HIT = (ms: number, extra = '') => `{"latency_ms":${ms},"status":200,"response_headers":{"x-anthropic-layer-id":"zero-plane-v1"${extra}}}`;

let dir: string;
/** `--config.file` of a config with the traffic guard at 1: for tests about a verdict's arithmetic on a few lines. */
let GUARD_1: string[] = [];
beforeAll(() => {
  dir = tempDir('zp-cli-');
  writeFileSync(join(dir, 'guard-1.yml'), 'alerts:\n  minRequests: 1\n');
  GUARD_1 = ['--config.file', join(dir, 'guard-1.yml')];
});

describe('report', () => {
  it('prints the report JSON keys of SPEC §6', () => {
    const file = join(dir, 'ok.ndjson');
    writeFileSync(file, `${HIT(180)}\n${HIT(182)}\n`);
    const r = runCli(['report', '--format', 'json', file]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as Record<string, unknown>;
    for (const key of [
      'lines',
      'records',
      'parseErrors',
      'requests',
      'hits',
      'hitRate',
      'p50Seconds',
      'p99Seconds',
      'p999Seconds',
      'stddevSeconds',
      'p99Drift',
      'degradedCount',
      'warmupEfficiency',
      'cachedCount',
      'downgrades',
      'optInHeader',
      'alerts',
    ]) {
      expect(report).toHaveProperty(key);
    }
    expect(report).toMatchObject({ lines: 2, records: 2, requests: 2, hits: 2, hitRate: 1, degradedCount: 0, warmupEfficiency: null });
  });

  it('--fail-on P0 exits 3 only when drift > +5 % and degraded > 0 together (with the traffic guard at 1 request)', () => {
    const p0 = join(dir, 'p0.ndjson');
    writeFileSync(p0, `${HIT(250, ',"x-anthropic-delay-profile":"degraded"')}\n`);
    expect(runCli(['report', '--fail-on', 'P0', ...GUARD_1, p0]).code).toBe(3);
    const driftOnly = join(dir, 'drift.ndjson');
    writeFileSync(driftOnly, `${HIT(250)}\n`);
    expect(runCli(['report', '--fail-on', 'P0', ...GUARD_1, driftOnly]).code).toBe(0);
    expect(runCli(['report', '--fail-on', 'ZeroPlaneP99DriftOutOfBand', ...GUARD_1, driftOnly]).code).toBe(3);
  });

  it('at the default alerts.minRequests (200), one slow degraded request is no P0; 200 with the same share are', () => {
    const one = join(dir, 'one.ndjson');
    writeFileSync(one, `${HIT(250, ',"x-anthropic-delay-profile":"degraded"')}\n`);
    expect(runCli(['report', '--fail-on', 'P0', one]).code).toBe(0);
    const many = join(dir, 'many.ndjson');
    writeFileSync(many, `${Array.from({ length: 200 }, () => HIT(250, ',"x-anthropic-delay-profile":"degraded"')).join('\n')}\n`);
    expect(runCli(['report', '--fail-on', 'P0', many]).code).toBe(3);
  });

  it('reads gzip files transparently and stdin as -', () => {
    const gz = join(dir, 'rotated.log.1');
    writeFileSync(gz, gzipSync(`${HIT(180)}\n${HIT(181)}\n${HIT(182)}\n`));
    expect(JSON.parse(runCli(['report', '--format=json', gz]).stdout)).toMatchObject({ records: 3 });
    expect(JSON.parse(runCli(['report', '--format=json', '-'], `${HIT(180)}\n`).stdout)).toMatchObject({ records: 1 });
  });

  it('text format gives a verdict per signal', () => {
    const file = join(dir, 'text.ndjson');
    writeFileSync(file, `${HIT(180, ',"x-anthropic-delay-profile":"warmup=hit"')}\n`);
    const r = runCli(['report', file]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/hit rate\s+100\.00 %\s+healthy/);
    expect(r.stdout).toMatch(/p99 drift\s+-2\.70 %\s+healthy/);
    expect(r.stdout).toMatch(/degraded\s+0\s+healthy/);
    expect(r.stdout).toMatch(/warm-up efficiency\s+100\.00 %\s+healthy/);
    expect(r.stdout).toContain('alerts firing: none');
  });

  it('says what an SRE looks at next: status classes, the most frequent codes, and which way the p99 is out of band', () => {
    const file = join(dir, 'statuses.ndjson');
    const miss = (status: number) => `{"latency_ms":300,"status":${status},"response_headers":{"x-anthropic-layer-id":"standard-v3"}}`;
    const slow = [HIT(250), HIT(250), HIT(180), miss(429), miss(429), miss(400), miss(529), '{"latency_ms":90}'];
    writeFileSync(file, `${slow.join('\n')}\n`);
    const text = runCli(['report', file]);
    expect(text.stdout).toMatch(/p99 drift\s+\+3[45]\.\d\d %\s+UNHEALTHY, too slow \(p99 2[45]\d\.\d\d ms/);
    expect(text.stdout).toContain('status: 2xx 3, 4xx 3, 5xx 1, unknown 1; top codes: 200 ×3, 429 ×2, 400 ×1, 529 ×1');
    expect(text.stdout).toContain(`input: ${file} default`);
    const json = JSON.parse(runCli(['report', '--format', 'json', file]).stdout) as Record<string, unknown>;
    expect(json).toMatchObject({
      statusClasses: { '2xx': 3, '4xx': 3, '5xx': 1, unknown: 1 },
      topStatusCodes: [
        { code: 200, count: 3 },
        { code: 429, count: 2 },
        { code: 400, count: 1 },
        { code: 529, count: 1 },
      ],
      p99Band: 'too_slow',
      input: { [file]: 'default' },
    });
    writeFileSync(file, `${[HIT(120), HIT(121)].join('\n')}\n`);
    expect(runCli(['report', file]).stdout).toMatch(/p99 drift\s+-34\.\d+ %\s+UNHEALTHY, too fast/);
    expect(JSON.parse(runCli(['report', '--format', 'json', file]).stdout)).toMatchObject({ p99Band: 'too_fast' });
    writeFileSync(file, `${miss(200)}\n`);
    expect(JSON.parse(runCli(['report', '--format', 'json', file]).stdout)).toMatchObject({ p99Band: null });
  });

  it('an unreadable input is a runtime failure (1) naming the file', () => {
    const r = runCli(['report', join(dir, 'nope.ndjson')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('nope.ndjson');
  });

  it('bad usage exits 2', () => {
    expect(runCli(['report']).code).toBe(2);
    expect(runCli(['report', '--format', 'xml', 'x']).code).toBe(2);
    expect(runCli(['report', '--fail-on', 'P7', 'x']).code).toBe(2);
    expect(runCli(['report', '--no-such-flag', 'x']).code).toBe(2);
  });
});

describe('config errors', () => {
  it('exit 2 naming the file, the line, the key and what is wrong', () => {
    const cfg = join(dir, 'bad.yml');
    writeFileSync(cfg, 'signals:\n  baselineSeconds: 0.185\n  tolerance: lots\n');
    for (const cmd of [
      ['report', '--config.file', cfg, 'x'],
      ['serve', `--config.file=${cfg}`],
    ]) {
      const r = runCli(cmd);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${cfg}:3: signals.tolerance: `);
    }
  });
});

describe('help', () => {
  it('documents every flag with its default, each value named for its kind', () => {
    const r = runCli(['serve', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/--web\.listen-address=ADDR \.\.\.\s+.*\n?.*\(default: :9185\)/);
    expect(r.stdout).toMatch(/--web\.telemetry-path=PATH\s+.*\(default: \/metrics\)/);
    expect(r.stdout).toContain('--config.file=FILE');
    const report = runCli(['report', '--help']);
    expect(report.stdout).toMatch(/--format=FORMAT\s+.*\(default: text\)/);
    expect(report.stdout).toContain('--fail-on=CONDITION');
  });

  it('aligns the flag column: no flag runs into its help text, wrapped lines start under it', () => {
    for (const command of ['serve', 'report', 'backtest', 'compare', 'export', 'generate', 'demo', 'simulate', 'load', 'probe']) {
      const rows = runCli([command, '--help']).stdout.split('Flags:\n')[1]?.trimEnd().split('\n') ?? [];
      expect(rows.length).toBeGreaterThan(2);
      const column = (/^ {2}--\S+(?: \.\.\.)? {2,}/.exec(rows[0] as string) as RegExpExecArray)[0].length;
      for (const row of rows) {
        expect(row.length, row).toBeLessThanOrEqual(100);
        // Every row has its help text starting at the same column, after at least two spaces.
        expect(row.slice(column - 2, column), `${command}: ${row}`).toBe('  ');
        expect(row.charAt(column), `${command}: ${row}`).not.toBe(' ');
      }
    }
  });

  it('the overview (--help, help) lists every command with one line', () => {
    for (const args of [['--help'], ['help'], ['-h']]) {
      const r = runCli(args);
      expect(r.code).toBe(0);
      for (const command of ['serve', 'report', 'backtest', 'compare', 'export', 'generate', 'demo', 'simulate', 'load', 'probe', 'help']) {
        expect(r.stdout, `${args.join(' ')} lists ${command}`).toMatch(new RegExp(`^  ${command} +\\S`, 'm'));
      }
      expect(r.stdout).toContain('--web.listen-address=ADDR');
    }
  });

  it('help COMMAND is COMMAND --help', () => {
    for (const command of ['report', 'generate', 'serve']) {
      const viaHelp = runCli(['help', command]);
      expect(viaHelp.code).toBe(0);
      expect(viaHelp.stdout).toBe(runCli([command, '--help']).stdout);
    }
    const bad = runCli(['help', 'reprot']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Did you mean "report"?');
  });
});

describe('a typo never starts a server', () => {
  it('an unknown first word that is not a path exits 2 with the commands and a suggestion', () => {
    const r = runCli(['reprot', 'x.log']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('unknown command "reprot"');
    expect(r.stderr).toContain('Did you mean "report"?');
    expect(r.stderr).toContain('Commands: serve, report, backtest, compare, export, generate, demo, simulate, load, probe, help.');
    expect(r.stderr).toContain('zero-plane-exporter serve reprot');
    const far = runCli(['frobnicate']);
    expect(far.code).toBe(2);
    expect(far.stderr).not.toContain('Did you mean');
    expect(runCli(['hepl']).stderr).toContain('Did you mean "help"?');
    expect(runCli(['genrate']).stderr).toContain('Did you mean "generate"?');
  });

  it('an existing file, a path or a glob as the first word is still what serve follows', () => {
    // The word resolves to serve; a bad flag after it makes serve exit 2 before it binds anything.
    writeFileSync(join(dir, 'report'), '');
    for (const word of [join(dir, 'report'), 'logs/*.log', './gw.log', '-']) {
      const r = runCli([word, '--no-such-flag']);
      expect(r.code, word).toBe(2);
      expect(r.stderr, word).toContain("Unknown option '--no-such-flag'");
      expect(r.stderr, word).not.toContain('unknown command');
    }
  });
});

describe('report band verdicts are exact, as the rules decide them', () => {
  it('p99 just under the ceiling is in band even when the sketch estimate lands just above it', () => {
    // 98 hits at 150 ms, one degraded hit at 194.1 ms, one at 300 ms: nearest-rank p99 = 194.1 ms ≤ 194.25 ms.
    const lines = [...Array(98).fill(HIT(150)), HIT(194.1, ',"x-anthropic-delay-profile":"degraded"'), HIT(300)];
    const file = join(dir, 'edge.ndjson');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const r = runCli(['report', '--format=json', '--fail-on', 'P0', ...GUARD_1, file]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { alerts: { name: string; firing: boolean }[] };
    expect(report.alerts.find((a) => a.name === 'ZeroPlaneP0DriftWithDegraded')?.firing).toBe(false);
    expect(report.alerts.find((a) => a.name === 'ZeroPlaneP99DriftOutOfBand')?.firing).toBe(false);
    // One more slow hit: 2 of 101 above the ceiling → p99 above it, P0 fires.
    writeFileSync(file, `${[...lines, HIT(300)].join('\n')}\n`);
    expect(runCli(['report', '--fail-on', 'P0', ...GUARD_1, file]).code).toBe(3);
  });

  it('a canary cohort above the ceiling fires ZeroPlaneCanaryRollback; the stable cohort does not', () => {
    const hit = (ms: number, cohort: string) => `{"latency_ms":${ms},"cohort":"${cohort}","response_headers":{"x-anthropic-layer-id":"zero-plane-v1"}}`;
    const file = join(dir, 'canary.ndjson');
    const stableSlow = [...Array(50).fill(hit(250, 'stable')), ...Array(50).fill(hit(150, 'canary-1pct'))];
    writeFileSync(file, `${stableSlow.join('\n')}\n`);
    expect(runCli(['report', '--fail-on', 'ZeroPlaneCanaryRollback', ...GUARD_1, file]).code).toBe(0);
    writeFileSync(file, `${[...stableSlow, hit(250, 'canary-1pct')].join('\n')}\n`);
    expect(runCli(['report', '--fail-on', 'ZeroPlaneCanaryRollback', ...GUARD_1, file]).code).toBe(3);
    // The canary's own Zero-Plane requests (51) are under the default guard: no rollback on so few.
    expect(runCli(['report', '--fail-on', 'ZeroPlaneCanaryRollback', file]).code).toBe(0);
  });
});
