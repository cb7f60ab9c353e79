// input.preset: auto. A source's format is decided from its first lines, and reading a file that way must
// equal reading it with the right preset given (a property over every preset's shape, with garbage and
// header-less lines before and between the readable ones); no line is dropped or counted twice; the
// choice is exposed and logged; an input no preset reads, or read with the wrong preset, is said so once,
// with the preset that would read it.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { defaultConfig } from '../../../src/config/schema.js';
import { Pipeline } from '../../../src/pipeline.js';
import { DETECT_WAIT_MS, WATCH_MS, type InputHint } from '../../../src/record/source-inputs.js';
import { feedLines } from '../../../src/ingest/feed-lines.js';
import { DETECT_MAX_HELD_LINES } from '../../../src/record/detect-preset.js';
import { WATCH_LINES } from '../../../src/record/input-watch.js';
import { canonicalHeaderName, PRESET_NAMES, type PresetName } from '../../../src/record/presets.js';
import { buildReport } from '../../../src/report/build-report.js';
import { isOpenWebhookWarning, runCli, startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const NOW = Date.UTC(2026, 10, 29, 12);

/** One request as any gateway would see it; each preset writes it in its own shape (below). */
interface Req {
  ms: number;
  status: number;
  layer: string;
  profile: string | undefined;
  cached: boolean;
  downgrade: string | undefined;
  optIn: string | undefined;
  model: string | undefined;
  cohort: string | undefined;
  /** How this gateway spells a missing value, where it spells one. */
  missing: '' | '-' | null;
}

const H = {
  layer: 'x-anthropic-layer-id',
  profile: 'x-anthropic-delay-profile',
  cached: 'x-anthropic-cached',
  downgrade: 'x-anthropic-downgrade-reason',
  optIn: 'x-anthropic-experimental',
} as const;

function responseHeaders(r: Req): Record<string, string | undefined> {
  return { [H.layer]: r.layer, [H.profile]: r.profile, [H.cached]: r.cached ? 'true' : undefined, [H.downgrade]: r.downgrade };
}

/** Headers as a flat-field gateway writes them: every field present, a missing one spelled `missing`. */
function flat(prefix: string, headers: Record<string, string | undefined>, missing: Req['missing'], style: 'underscore' | 'canonical' = 'underscore', omit = false): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined && omit) continue;
    out[prefix + (style === 'canonical' ? canonicalHeaderName(name) : name.replaceAll('-', '_'))] = value ?? missing;
  }
  return out;
}

/** Headers as an object; Caddy writes arrays of values, Kong strings. */
function object(headers: Record<string, string | undefined>, arrays: boolean, canonical: boolean): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(headers)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => [canonical ? canonicalHeaderName(k) : k, arrays ? [v] : v]),
  );
}

const WRITE: Record<PresetName, (r: Req, i: number) => Record<string, unknown>> = {
  default: (r, i) => ({
    ts: new Date(NOW + i).toISOString(),
    latency_ms: r.ms,
    status: r.status,
    model: r.model ?? r.missing,
    cohort: r.cohort,
    response_headers: object(responseHeaders(r), false, false),
    request_headers: object({ [H.optIn]: r.optIn }, false, false),
  }),
  'nginx-json': (r) => ({
    request_time: String(r.ms / 1000),
    upstream_response_time: r.status === 429 ? '' : String(r.ms / 1000),
    status: String(r.status),
    uri: '/v1/messages',
    http_x_model: r.model ?? '',
    ...flat('upstream_http_', responseHeaders(r), ''),
    ...flat('http_', { [H.optIn]: r.optIn }, ''),
  }),
  'envoy-json': (r) => ({
    duration: Math.round(r.ms),
    response_code: r.status,
    model: r.model ?? r.missing,
    ...flat('resp_', responseHeaders(r), r.missing === '' ? null : r.missing),
    ...flat('req_', { [H.optIn]: r.optIn }, r.missing === '' ? null : r.missing),
  }),
  'caddy-json': (r, i) => ({
    level: 'info',
    ts: (NOW + i) / 1000,
    request: { uri: '/v1/messages', headers: { ...object({ [H.optIn]: r.optIn, 'x-model': r.model }, true, true), 'User-Agent': ['t'] } },
    duration: r.ms / 1000,
    status: r.status,
    resp_headers: object(responseHeaders(r), true, true),
  }),
  'haproxy-json': (r) => ({
    accept_ts: `${NOW / 1000}.000`,
    ta_ms: String(Math.round(r.ms)),
    status: String(r.status),
    path: '/v1/messages',
    ...flat('capture_req_', { [H.optIn]: r.optIn, 'x-model': r.model }, '-'),
    ...flat('capture_res_', responseHeaders(r), '-'),
  }),
  'kong-json': (r, i) => ({
    response: { status: r.status, headers: object(responseHeaders(r), false, false) },
    request: { headers: object({ [H.optIn]: r.optIn, 'x-model': r.model }, false, false) },
    started_at: NOW + i,
    latencies: { request: Math.round(r.ms), proxy: -1, kong: 0 },
  }),
  'traefik-json': (r) => ({
    Duration: Math.round(r.ms * 1e6),
    DownstreamStatus: r.status,
    RouterName: 'llm@file',
    ...flat('downstream_', responseHeaders(r), null, 'canonical', true),
    ...flat('request_', { [H.optIn]: r.optIn, 'x-model': r.model }, null, 'canonical', true),
  }), // Apache logs every header of its LogFormat, a missing one as "-".
  'apache-json': (r, i) => ({
    time_msec: NOW + i,
    duration_us: Math.round(r.ms * 1000),
    status: r.status,
    url_path: '/v1/messages',
    headers_in: { 'x-model': r.model ?? '-', 'x-cohort': r.cohort ?? '-', [H.optIn]: r.optIn ?? '-' },
    headers_out: Object.fromEntries(Object.entries(responseHeaders(r)).map(([k, v]) => [k, v ?? '-'])),
  }),
};

/** The latency field of each preset alone: a line no preset reads (no header), that only some can count. */
const LATENCY_ONLY: Record<PresetName, (ms: number) => Record<string, unknown>> = {
  default: (ms) => ({ latency_ms: ms }),
  'nginx-json': (ms) => ({ request_time: String(ms / 1000) }),
  'envoy-json': (ms) => ({ duration: Math.round(ms), response_code: 200 }),
  'caddy-json': (ms) => ({ duration: ms / 1000, status: 200, request: { uri: '/' } }),
  'haproxy-json': (ms) => ({ ta_ms: String(Math.round(ms)) }),
  'kong-json': (ms) => ({ latencies: { request: Math.round(ms) } }),
  'traefik-json': (ms) => ({ Duration: Math.round(ms * 1e6) }),
  'apache-json': (ms) => ({ duration_us: Math.round(ms * 1000), status: 200, url_path: '/healthz' }),
};

const req: fc.Arbitrary<Req> = fc.record({
  ms: fc.oneof(fc.integer({ min: 1, max: 600 }), fc.double({ min: 0.5, max: 900, noNaN: true })),
  status: fc.constantFrom(200, 200, 200, 400, 429, 529, 503),
  layer: fc.constantFrom('zero-plane-v1', 'zero-plane-v2', 'standard-v3', ''),
  profile: fc.option(fc.constantFrom('warmup=hit, degraded=?0, mode=balanced', 'warmup=miss, degraded=?1, mode=strict', 'mode=adaptive', 'warmup=hit,,'), { nil: undefined }),
  cached: fc.boolean(),
  downgrade: fc.option(fc.constantFrom('context_too_long', '-'), { nil: undefined }),
  optIn: fc.option(fc.constantFrom('zero-plane-2024', 'Zero-Plane-2024', 'zero-plane-2024\u200b', 'zero-plane-2024\u00a0', 'zero-plane-2023', ''), { nil: undefined }),
  model: fc.option(fc.constantFrom('claude-sonnet', 'claude-haiku', '-'), { nil: undefined }),
  cohort: fc.option(fc.constantFrom('stable', 'canary'), { nil: undefined }),
  missing: fc.constantFrom('' as const, '-' as const, null),
});

type Item = { kind: 'request'; req: Req } | { kind: 'latency-only'; ms: number } | { kind: 'garbage'; text: string };
const garbage = fc.constantFrom('not json', '[1,2]', '"text"', 'null', '{}', '{"status":200}', '{"latency_ms":', '');
const item: fc.Arbitrary<Item> = fc.oneof(
  { weight: 5, arbitrary: req.map((r) => ({ kind: 'request' as const, req: r })) },
  { weight: 2, arbitrary: fc.integer({ min: 1, max: 500 }).map((ms) => ({ kind: 'latency-only' as const, ms })) },
  { weight: 2, arbitrary: garbage.map((text) => ({ kind: 'garbage' as const, text })) },
);

function linesOf(preset: PresetName, items: Item[]): string[] {
  return items
    .map((it, i) => (it.kind === 'request' ? JSON.stringify(WRITE[preset](it.req, i)) : it.kind === 'latency-only' ? JSON.stringify(LATENCY_ONLY[preset](it.ms)) : it.text))
    .filter((l) => l !== '');
}

/** The report of `lines` read as `source` with `yaml`, in the pipeline `report` runs. */
function reportOf(yaml: string, lines: string[]): Record<string, unknown> {
  const config = parseConfig(yaml, 'test.yml');
  const p = new Pipeline(config, { keepTotals: true, clock: () => NOW });
  for (const l of lines) p.line(l, 'src');
  p.finish();
  return JSON.parse(JSON.stringify(buildReport(p, config))) as Record<string, unknown>;
}

describe('detection + parsing of a file equals parsing it with the right preset given', () => {
  it.each(PRESET_NAMES)('%s', (preset) => {
    fc.assert(
      fc.property(fc.array(item, { maxLength: 40 }), req, fc.nat(), (items, readable, at) => {
        // At least one line the preset reads, anywhere: before it, lines are held or counted at once.
        const all = [...items];
        all.splice(at % (all.length + 1), 0, { kind: 'request', req: { ...readable, layer: 'zero-plane-v1' } });
        const lines = linesOf(preset, all);
        const detected = reportOf('input:\n  preset: auto\n', lines);
        const given = reportOf(`input:\n  preset: ${preset}\n`, lines);
        expect(detected.input).toEqual({ src: preset });
        expect(detected).toEqual(given);
      }),
      { numRuns: 150 },
    );
  });
});

describe('the decision', () => {
  const nginxLine = JSON.stringify(
    WRITE['nginx-json'](
      { ms: 180, status: 200, layer: 'zero-plane-v1', profile: undefined, cached: false, downgrade: undefined, optIn: 'zero-plane-2024', model: 'm', cohort: undefined, missing: '' },
      0,
    ),
  );

  it('lines all presets read alike are counted at once; lines they disagree on wait for the decision, in order', () => {
    const decided: string[] = [];
    const p = new Pipeline(defaultConfig(), { clock: () => NOW, input: { decided: (s, preset, how) => decided.push(`${s} ${preset} ${how}`) } });
    p.line('not json', 'src');
    p.line('{"status":200}', 'src');
    expect(p.metrics.lines.sum()).toBe(2);
    expect(p.metrics.parseErrors.sum()).toBe(2);
    p.line('{"request_time":"0.2"}', 'src'); // nginx counts it, the others skip it: held
    expect(p.metrics.lines.sum()).toBe(2);
    expect(p.presets()).toEqual({ src: null });
    p.line(nginxLine, 'src');
    expect(decided).toEqual(['src nginx-json detected']);
    expect(p.presets()).toEqual({ src: 'nginx-json' });
    expect(p.metrics.lines.sum()).toBe(4);
    expect(p.metrics.requests.sum()).toBe(2);
    expect(p.inputInfo.entries()).toEqual([[['src', 'nginx-json'], 1]]);
  });

  it('each source is decided on its own', () => {
    const p = new Pipeline(defaultConfig(), { clock: () => NOW });
    p.line(nginxLine, 'a');
    p.line('{"latency_ms":5,"response_headers":{"x-anthropic-layer-id":"zero-plane-v1"}}', 'b');
    expect(p.presets()).toEqual({ a: 'nginx-json', b: 'default' });
  });

  it('a configured preset wins: no detection, the line another preset would read is skipped', () => {
    const decided: string[] = [];
    const p = new Pipeline(parseConfig('input:\n  preset: envoy-json\n', 't.yml'), { input: { decided: (s, preset, how) => decided.push(`${s} ${preset} ${how}`) } });
    p.line(nginxLine, 'src');
    expect(decided).toEqual(['src envoy-json configured']);
    expect(p.metrics.parseErrors.get(['missing_latency'])).toBe(1);
  });

  it('an ingest body is counted whole in its own response, held lines included', () => {
    const p = new Pipeline(defaultConfig(), { clock: () => NOW });
    const body = Buffer.from('{"latency_ms":3}\nnot json\n{"latency_ms":4,"status":200}\n');
    expect(feedLines(p, [body], { maxLineBytes: 1024, source: 'http', recordSeparators: false })).toEqual({ accepted: 2, rejected: 1, reasons: { invalid_json: 1 } });
    expect(p.presets()).toEqual({ http: 'default' });
  });

  it('held lines are decided by the most records when no line decides: full, timed (serve), drained (ingest), finished (report)', () => {
    const full = new Pipeline(defaultConfig(), { clock: () => NOW });
    for (let i = 0; i < DETECT_MAX_HELD_LINES; i++) full.line('{"request_time":"0.2"}', 'src');
    expect(full.presets()).toEqual({ src: 'nginx-json' });
    expect(full.metrics.requests.sum()).toBe(DETECT_MAX_HELD_LINES);

    let now = NOW;
    const timed = new Pipeline(defaultConfig(), { clock: () => now });
    timed.line('{"ta_ms":"12"}', 'src');
    timed.settle();
    expect(timed.metrics.lines.sum()).toBe(0);
    now += DETECT_WAIT_MS;
    timed.settle();
    expect(timed.presets()).toEqual({ src: 'haproxy-json' });
    expect(timed.metrics.requests.sum()).toBe(1);

    const drained = new Pipeline(defaultConfig(), { clock: () => NOW });
    drained.line('{"latency_ms":3}', 'http');
    drained.drain('http');
    expect([drained.presets(), drained.metrics.requests.sum()]).toEqual([{ http: 'default' }, 1]);

    const finished = new Pipeline(defaultConfig(), { clock: () => NOW });
    finished.line('{"Duration":5000000}', 'f');
    finished.finish();
    expect([finished.presets(), finished.metrics.requests.sum()]).toEqual([{ f: 'traefik-json' }, 1]);
  });
});

describe('input not understood', () => {
  // As many as a watch looks at, so what it finds is said without waiting for WATCH_MS.
  const nginxLines = Array.from({ length: WATCH_LINES }, (_, i) =>
    JSON.stringify(
      WRITE['nginx-json'](
        { ms: 150 + i, status: 200, layer: 'zero-plane-v1', profile: undefined, cached: false, downgrade: undefined, optIn: 'zero-plane-2024', model: undefined, cohort: undefined, missing: '' },
        i,
      ),
    ),
  );

  it('read with the wrong preset: most lines skipped, said once with the top reasons and the preset that reads them', () => {
    const hints: [string, InputHint][] = [];
    const p = new Pipeline(parseConfig('input:\n  preset: default\n', 't.yml'), { input: { notUnderstood: (s, h) => hints.push([s, h]) } });
    for (const l of nginxLines.slice(0, -1)) p.line(l, 'src');
    expect(hints).toEqual([]);
    p.line(nginxLines.at(-1) as string, 'src');
    expect(hints).toEqual([['src', { preset: 'default', lines: WATCH_LINES, skipped: WATCH_LINES, reasons: [['missing_latency', WATCH_LINES]], suggestion: 'nginx-json' }]]);
    p.finish();
    expect(hints).toHaveLength(1);
  });

  it('after WATCH_LINES lines or WATCH_MS, whichever first; labels that never resolved are said with their path', () => {
    const labels: string[] = [];
    let now = NOW;
    const p = new Pipeline(defaultConfig(), { clock: () => now, input: { labelUnresolved: (s, label, path, records) => labels.push(`${s} ${label} ${path} ${records}`) } });
    p.line(nginxLines[0] as string, 'src');
    now += WATCH_MS;
    p.settle();
    expect(labels).toEqual(['src model http_x_model 1', 'src cohort http_x_cohort 1']);
    now += WATCH_MS;
    p.settle();
    expect(labels).toHaveLength(2);

    const byLines: string[] = [];
    const q = new Pipeline(defaultConfig(), { clock: () => NOW, input: { labelUnresolved: (_s, label) => byLines.push(label) } });
    for (let i = 0; i < WATCH_LINES; i++) q.line(nginxLines[i % nginxLines.length] as string, 'src');
    expect(byLines).toEqual(['model', 'cohort']);
  });

  let serve: ServeProcess | undefined;
  afterEach(async () => {
    await serve?.stop();
    serve = undefined;
  });

  it('serve warns once, naming the preset that would read the lines; report says it on stderr', async () => {
    const dir = tempDir('zp-not-understood-');
    const cfg = join(dir, 'zp.yml');
    writeFileSync(cfg, 'input:\n  preset: envoy-json\n');
    const log = join(dir, 'gateway.log');
    writeFileSync(log, '');
    serve = await startServe([`--config.file=${cfg}`, log]);
    writeFileSync(log, `${nginxLines.join('\n')}\n`);
    const s = serve;
    const warning = await waitFor(() => s.logs.find((l) => l.msg === 'input not understood: most of the first lines were skipped'), 20_000, 'the warning');
    expect(warning).toMatchObject({
      level: 'warn',
      source: log,
      preset: 'envoy-json',
      lines: 100,
      skipped: 100,
      reasons: 'missing_latency 100',
      suggestion: 'nginx-json',
      fix: 'set input.preset: nginx-json',
    });
    expect(s.logs.filter((l) => l.level === 'warn' && !isOpenWebhookWarning(l))).toHaveLength(1);

    const r = runCli(['report', '--config.file', cfg, log]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${log}: 100 of the first 100 lines skipped (missing_latency 100); read as envoy-json; they look like nginx-json: set input.preset: nginx-json`);
    expect(r.stderr).toContain('no line of the input became a record (100 lines read); exit 1');
    // The same log with no config is read right.
    const auto = runCli(['report', '--format', 'json', log]);
    expect(auto.code).toBe(0);
    expect(JSON.parse(auto.stdout)).toMatchObject({ records: 100, input: { [log]: 'nginx-json' } });
  });

  it('report on lines no preset reads: exit 1, and says no preset reads them', () => {
    const dir = tempDir('zp-no-preset-');
    const log = join(dir, 'access.log');
    writeFileSync(log, '127.0.0.1 - - [29/Nov/2026:12:00:00 +0000] "POST /v1/messages HTTP/1.1" 200 271\n'.repeat(5));
    const r = runCli(['report', '--format', 'json', log]);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ lines: 5, records: 0, input: { [log]: null } });
    // nginx's default text format, said as such.
    expect(r.stderr).toContain(`${log}: 5 of the first 5 lines skipped (invalid_json 5); no preset reads them; they are the common/combined text format`);
    // Lines of no format known: docs/input.md.
    writeFileSync(log, 'GET /v1/messages took 183 ms\n'.repeat(5));
    expect(runCli(['report', log]).stderr).toContain(`${log}: 5 of the first 5 lines skipped (invalid_json 5); no preset reads them; see docs/input.md for the log formats read`);
    // An empty input is not "not understood".
    writeFileSync(log, '');
    expect(runCli(['report', log]).code).toBe(0);
  });
});
