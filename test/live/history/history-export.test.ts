// `export --format openmetrics`: what it writes for a replayed log (every counter and histogram series at
// every step from the first, at 0 until it counted anything; gauges from when they exist; # EOF), that
// promtool backfills it, that Debian's python3-prometheus-client parser accepts it (each timestamp: that
// parser cannot read a histogram with two timestamped points, shown below on the spec's own example),
// --out's one file per 2 h block, and target labels.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { requireBinary } from '../../helpers/binaries.js';
import { runCli, runCliToFile } from '../../helpers/cli-process.js';
import { heldOutLog, HELD_OUT_START_MS } from '../../helpers/held-out-log.js';
import { pythonOpenMetrics } from '../../helpers/openmetrics.js';
import { tempDir } from '../../helpers/temp-dir.js';

const dir = tempDir('zp-export-');
const log = join(dir, 'gateway.log');
const out = join(dir, 'export.om');
const START = HELD_OUT_START_MS + 90 * 60_000; // 01:30: the log crosses the 02:00 block boundary
let text = '';

interface Sample {
  series: string;
  value: number;
  t: number;
}

function samplesOf(om: string): Sample[] {
  return om
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const m = /^(\S+?(?:\{.*\})?) (\S+) (\S+)$/.exec(l);
      if (m === null) throw new Error(`not a sample with a timestamp: ${l}`);
      return { series: m[1] as string, value: Number(m[2]), t: Number(m[3]) };
    });
}

function bySeries(samples: Sample[]): Map<string, Sample[]> {
  const out = new Map<string, Sample[]>();
  for (const s of samples) {
    let list = out.get(s.series);
    if (list === undefined) out.set(s.series, (list = []));
    list.push(s);
  }
  return out;
}

beforeAll(() => {
  const lines = heldOutLog({
    startMs: START,
    rate: 1,
    bad: true,
    phases: [
      { minutes: 20, slow: 0, degraded: 0 },
      { minutes: 20, slow: 0.3, degraded: 0.05 },
      { minutes: 20, slow: 0, degraded: 0 },
    ],
  }).lines;
  writeFileSync(log, `${lines.join('\n')}\n`);
  const r = runCliToFile(['export', '--format', 'openmetrics', log], out);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toContain('skipped 3 without a timestamp, 2 far-out');
  text = readFileSync(out, 'utf8');
});

describe('export --format openmetrics', () => {
  it('writes every counter and histogram series at every 15 s step from the first, at 0 until it counts; gauges from when they exist; # EOF last', () => {
    expect(text.endsWith('\n# EOF\n')).toBe(true);
    const series = bySeries(samplesOf(text));
    const first = Math.min(...[...series.values()].map((s) => (s[0] as Sample).t));
    const last = Math.max(...[...series.values()].map((s) => (s.at(-1) as Sample).t));
    expect(first * 1000).toBe(START); // the first step, on the rules' 30 s grid
    expect((last - first) % 30).toBe(0);
    let counters = 0;
    for (const [name, points] of series) {
      const gauge = /^zero_plane_exporter_last_record_timestamp_seconds|^zero_plane_exporter_input_info|^zero_plane_p99_|^zero_plane_exporter_build_info/.test(name);
      points.forEach((p, i) => i > 0 && expect(p.t - (points[i - 1] as Sample).t, name).toBe(15));
      expect((points.at(-1) as Sample).t, name).toBe(last);
      if (gauge) continue;
      counters++;
      expect((points[0] as Sample).t, name).toBe(first);
      expect((points[0] as Sample).value, name).toBe(0);
      if (!name.includes('_sum')) points.forEach((p, i) => i > 0 && expect(p.value, name).toBeGreaterThanOrEqual((points[i - 1] as Sample).value));
    }
    expect(counters).toBeGreaterThan(50);
    // The last-record gauge starts at the first step with a record before it, not at 0.
    const lastRecord = [...series].find(([n]) => n.startsWith('zero_plane_exporter_last_record_timestamp_seconds'))?.[1] as Sample[];
    expect((lastRecord[0] as Sample).t).toBe(first + 15);
    expect((lastRecord[0] as Sample).value * 1000).toBeGreaterThanOrEqual(START);
  });

  it('counts exactly what the log holds: requests at the last step are the records on the timeline', () => {
    const series = bySeries(samplesOf(text));
    let requests = 0;
    for (const [name, points] of series) if (name.startsWith('zero_plane_requests_total{')) requests += (points.at(-1) as Sample).value;
    const r = runCli(['backtest', '--format', 'json', log]);
    expect(r.code, r.stderr).toBe(0);
    expect(requests).toBe((JSON.parse(r.stdout) as { records: number }).records);
  });

  it('is backfilled by promtool tsdb create-blocks-from openmetrics, into the blocks of its 2 h spans', () => {
    const r = spawnSync(requireBinary('promtool'), ['tsdb', 'create-blocks-from', 'openmetrics', out, join(dir, 'blocks')], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(readdirSync(join(dir, 'blocks')).filter((d) => /^[0-9A-Z]{26}$/.test(d))).toHaveLength(2);
  });

  it("is accepted, one timestamp at a time, by Debian's python3-prometheus-client OpenMetrics parser", () => {
    // Each timestamp's samples, with every family's metadata, as one exposition.
    const blocks: { header: string; lines: string[] }[] = [];
    for (const line of text.split('\n')) {
      if (line === '' || line === '# EOF') continue;
      if (line.startsWith('# TYPE')) blocks.push({ header: line, lines: [] });
      else if (line.startsWith('#')) (blocks.at(-1) as { header: string }).header += `\n${line}`;
      else (blocks.at(-1) as { lines: string[] }).lines.push(line);
    }
    const times = [...new Set(blocks.flatMap((b) => b.lines.map((l) => l.slice(l.lastIndexOf(' ') + 1))))];
    expect(times.length).toBeGreaterThan(200);
    // Every 10th timestamp, and the first and the last: one python run per exposition is slow.
    const chosen = times.filter((_, i) => i % 10 === 0 || i === times.length - 1);
    for (const t of chosen) {
      const doc = `${blocks.map((b) => [b.header, ...b.lines.filter((l) => l.endsWith(` ${t}`))].join('\n')).join('\n')}\n# EOF\n`;
      const parsed = pythonOpenMetrics(doc);
      if (!parsed.ok) throw new Error(`at ${t}: ${parsed.error}`);
      expect(parsed.families.find((f) => f.name === 'zero_plane_request_duration_seconds')).toMatchObject({ type: 'histogram', unit: 'seconds' });
      expect(parsed.families.find((f) => f.name === 'zero_plane_requests')).toMatchObject({ type: 'counter' });
    }
  });

  it("(why one timestamp at a time) that parser drops the second point of a timestamped series: the OpenMetrics spec's own example loses a sample", () => {
    // The "correct example where there were multiple MetricPoints" of the OpenMetrics 1.0 spec.
    const spec =
      '# TYPE foo_seconds summary\n# UNIT foo_seconds seconds\nfoo_seconds_count{a="bb"} 0 123\nfoo_seconds_sum{a="bb"} 0 123\nfoo_seconds_count{a="bb"} 0 456\nfoo_seconds_sum{a="bb"} 0 456\n# EOF\n';
    const parsed = pythonOpenMetrics(spec);
    expect(parsed).toEqual({ ok: true, families: [{ name: 'foo_seconds', type: 'summary', unit: 'seconds', samples: 3 }] });
    // And a histogram with two points is refused outright, though it is valid OpenMetrics.
    const histogram =
      '# TYPE h histogram\nh_bucket{le="1.0"} 0 123\nh_bucket{le="+Inf"} 0 123\nh_count 0 123\nh_sum 0 123\nh_bucket{le="1.0"} 1 456\nh_bucket{le="+Inf"} 1 456\nh_count 1 456\nh_sum 1 456\n# EOF\n';
    expect(pythonOpenMetrics(histogram)).toEqual({ ok: false, error: '+Inf bucket missing: h' });
  });

  it('--out naming a file (or a path under one) exits 2 saying so, and writes nothing there', () => {
    const file = join(dir, 'not-a-dir');
    writeFileSync(file, 'kept\n');
    for (const target of [file, join(file, 'blocks')]) {
      const r = runCli(['export', '--out', target, log]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`--out ${target}: cannot make the output directory: it is a file, or lies under one, not a directory`);
    }
    expect(readFileSync(file, 'utf8')).toBe('kept\n');
  });

  it('with --out, writes one whole exposition per 2 h block, each backfilled by promtool into one block, with the same samples', () => {
    const blocksDir = join(dir, 'by-block');
    const r = runCli(['export', '--format', 'openmetrics', '--out', blocksDir, log]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    const files = readdirSync(blocksDir).sort();
    expect(files).toEqual(['2024-05-07T000000Z.om', '2024-05-07T020000Z.om']);
    const whole = new Map(samplesOf(text).map((s) => [`${s.series} ${s.t}`, s.value]));
    const split = new Set<string>();
    for (const f of files) {
      const body = readFileSync(join(blocksDir, f), 'utf8');
      expect(body.endsWith('\n# EOF\n')).toBe(true);
      for (const s of samplesOf(body)) {
        expect(whole.get(`${s.series} ${s.t}`), `${s.series} ${s.t}`).toBe(s.value);
        split.add(`${s.series} ${s.t}`);
      }
      const p = spawnSync(requireBinary('promtool'), ['tsdb', 'create-blocks-from', 'openmetrics', join(blocksDir, f), join(dir, `blocks-${f}`)], { encoding: 'utf8', timeout: 60_000 });
      expect(p.status, p.stderr).toBe(0);
      expect(readdirSync(join(dir, `blocks-${f}`)).filter((d) => /^[0-9A-Z]{26}$/.test(d))).toHaveLength(1);
    }
    // Left out of the per-block files: only the zeros of series that did not exist yet in a block.
    const left = [...whole].filter(([k]) => !split.has(k));
    expect(left.every(([, v]) => v === 0)).toBe(true);
    expect(split.size).toBeGreaterThan(left.length);
  });

  it('labels every series with the target labels: job from pack.selector, instance "backfill", and --label ones', () => {
    expect(text).toContain('zero_plane_requests_total{job="zero-plane-exporter",instance="backfill",hit="true"');
    const labelled = join(dir, 'labelled.om');
    const r = runCliToFile(['export', '--format', 'openmetrics', '--label', 'instance=gw-1:9185', '--label', 'cluster=eu-1', log], labelled);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(labelled, 'utf8')).toContain('zero_plane_requests_total{job="zero-plane-exporter",instance="gw-1:9185",cluster="eu-1",hit="true"');
  });

  it('refuses bad usage with exit 2: a label the metrics have, a step that is not whole seconds, another format', () => {
    for (const [args, message] of [
      [['--label', 'model=x'], /--label: model is a label of the exported metrics themselves/],
      [['--label', 'nolabel'], /--label: "nolabel" is not NAME=VALUE/],
      [['--step', '1500ms'], /--step: 1500ms is out of range: allowed from 1s to 5m, in whole seconds/],
      [['--format', 'text'], /--format must be openmetrics/],
    ] as const) {
      const r = runCli(['export', ...args, log]);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
    }
  });
});
