// A real Prometheus 2.42 on blocks backfilled with promtool, evaluating the pack's recording rules over
// time ranges the way `promtool tsdb create-blocks-from rules` would without its group offset: each rule
// by query_range on the rules' grid, one dependency level at a time, each level's results backfilled (and
// Prometheus restarted on them) before the next level reads them. Shared by the history live tests.
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { requireBinary } from '../../helpers/binaries.js';
import { freePort, startDaemon, type Daemon } from '../../helpers/processes.js';

export interface RecordingRule {
  record: string;
  expr: string;
  labels?: Record<string, string>;
}
export interface AlertingRule {
  alert: string;
  expr: string;
  for?: string;
  keep_firing_for?: string;
  labels?: Record<string, string>;
}
export type Matrix = { metric: Record<string, string>; values: [number, string][] }[];
export interface Range {
  start: number;
  end: number;
  step: number;
}

export class BackfilledPrometheus {
  private daemon: Daemon | undefined;
  private url = '';
  readonly data: string;

  constructor(private readonly dir: string) {
    this.data = join(dir, 'tsdb');
  }

  backfill(file: string): void {
    const r = spawnSync(requireBinary('promtool'), ['tsdb', 'create-blocks-from', 'openmetrics', file, this.data], { encoding: 'utf8', timeout: 120_000 });
    if (r.status !== 0) throw new Error(`promtool on ${file}: ${r.stderr}${r.stdout}`);
  }

  async start(): Promise<void> {
    const port = await freePort();
    this.url = `http://127.0.0.1:${port}`;
    writeFileSync(join(this.dir, 'prometheus.yml'), 'global: {}\n');
    this.daemon = await startDaemon(
      requireBinary('prometheus'),
      [`--config.file=${join(this.dir, 'prometheus.yml')}`, `--storage.tsdb.path=${this.data}`, '--storage.tsdb.retention.time=100y', `--web.listen-address=127.0.0.1:${port}`],
      `${this.url}/-/ready`,
      60_000,
    );
  }

  async stop(): Promise<void> {
    await this.daemon?.stop();
    this.daemon = undefined;
  }

  async queryRange(expr: string, range: Range): Promise<Matrix> {
    const params = new URLSearchParams({ query: expr, start: String(range.start), end: String(range.end), step: String(range.step) });
    const res = await fetch(`${this.url}/api/v1/query_range?${params}`, { signal: AbortSignal.timeout(60_000) });
    const body = (await res.json()) as { status: string; error?: string; data: { result: Matrix } };
    if (body.status !== 'success') throw new Error(`${expr}: ${body.error}`);
    return body.data.result;
  }

  /**
   * Every rule over every range, level by level; Prometheus is running on all the results afterwards.
   * Returns each rule's results per range (a rule, its range index, the matrix).
   */
  async evaluateRules(rules: readonly RecordingRule[], ranges: readonly Range[]): Promise<Map<RecordingRule, Matrix[]>> {
    const out = new Map<RecordingRule, Matrix[]>();
    await this.start();
    for (const [n, level] of levels(rules).entries()) {
      for (const rule of level) {
        const per: Matrix[] = [];
        for (const range of ranges) per.push(await this.queryRange(rule.expr, range));
        out.set(rule, per);
      }
      await this.stop();
      const file = join(this.dir, `level-${n}.om`);
      writeFileSync(file, asOpenMetrics(level.map((rule) => [rule, (out.get(rule) as Matrix[]).flat()] as const)));
      this.backfill(file);
      await this.start();
    }
    return out;
  }
}

/** Each rule's level: 1 reads only raw series, n + 1 reads a rule of level n (Prometheus evaluates them in order). */
export function levels(all: readonly RecordingRule[]): RecordingRule[][] {
  const level = new Map<RecordingRule, number>();
  const of = (r: RecordingRule): number => {
    const known = level.get(r);
    if (known !== undefined) return known;
    const deps = all.filter((d) => d !== r && new RegExp(`(^|[^a-z_:])${d.record.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}([^a-z0-9_:]|$)`).test(r.expr));
    const l = 1 + Math.max(0, ...deps.map(of));
    level.set(r, l);
    return l;
  };
  const out: RecordingRule[][] = [];
  for (const r of all) (out[of(r) - 1] ??= []).push(r);
  return out;
}

/**
 * Prometheus' own results of rules as OpenMetrics samples, one family per record name and each series'
 * samples together in time order (the results of one rule over several ranges, in range order).
 */
export function asOpenMetrics(results: readonly (readonly [RecordingRule, Matrix])[]): string {
  const families = new Map<string, Map<string, string[]>>();
  for (const [rule, matrix] of results) {
    let family = families.get(rule.record);
    if (family === undefined) families.set(rule.record, (family = new Map()));
    for (const series of matrix) {
      const labels = Object.entries({ ...series.metric, ...(rule.labels ?? {}) })
        .filter(([k]) => k !== '__name__')
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`)
        .join(',');
      let lines = family.get(labels);
      if (lines === undefined) family.set(labels, (lines = []));
      for (const [t, v] of series.values) lines.push(`${rule.record}{${labels}} ${v} ${t}`);
    }
  }
  let text = '';
  for (const [record, family] of families) {
    text += `# TYPE ${record} gauge\n`;
    for (const lines of family.values()) text += `${lines.join('\n')}\n`;
  }
  return `${text}# EOF\n`;
}

/** Prometheus' alert states over the evaluation steps (rules/alerting.go), from the steps its expression has a result. */
export function firingIntervals(holds: ReadonlySet<number>, range: Range, forS: number, keepS: number): { pendingSince: number; start: number; end: number | null }[] {
  const intervals: { pendingSince: number; start: number; end: number | null }[] = [];
  let pendingSince: number | undefined;
  let firing: { pendingSince: number; start: number; end: number | null } | undefined;
  let keepSince: number | undefined;
  for (let t = range.start; t <= range.end; t += range.step) {
    if (holds.has(t)) {
      keepSince = undefined;
      pendingSince ??= t;
      if (firing === undefined && t - pendingSince >= forS) intervals.push((firing = { pendingSince, start: t, end: null }));
      continue;
    }
    if (firing !== undefined && keepS > 0) {
      keepSince ??= t;
      if (t - keepSince < keepS) continue;
    }
    if (firing !== undefined) firing.end = t;
    firing = undefined;
    pendingSince = undefined;
    keepSince = undefined;
  }
  return intervals;
}
