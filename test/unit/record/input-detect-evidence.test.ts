// input.preset: auto decides by evidence: a line decides only when it shows a preset's own structure and a
// wanted header field where that preset keeps them. Health probes (no Zero-Plane header) are held and
// counted with the preset chosen; a probe two presets both read (Caddy's and Envoy's `duration`) never
// decides by the order of the presets; a tie waits for a line that decides; at a bound the held lines are
// decided by structure alone and that is said, or, when several presets read them alike, said loudly.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { defaultConfig } from '../../../src/config/schema.js';
import type { Evidence } from '../../../src/record/detect-preset.js';
import { DETECT_MAX_HELD_LINES } from '../../../src/record/detect-preset.js';
import { Pipeline } from '../../../src/pipeline.js';
import { PRESET_NAMES, type PresetName } from '../../../src/record/presets.js';
import { DETECT_WAIT_MS, type DecisionDetail } from '../../../src/record/source-inputs.js';
import { buildReport } from '../../../src/report/build-report.js';
import { newStream } from '../../../src/source/line-sink.js';
import { log, NOW, PROBE, PROBES_WITHOUT_EVIDENCE, REQUEST } from '../../helpers/gateway-lines.js';

const LAYER = 'zero-plane-v1';

type Decision = [string, PresetName, DecisionDetail | undefined];

function pipeline(yaml = '', clock = () => NOW): { p: Pipeline; decisions: Decision[] } {
  const decisions: Decision[] = [];
  const config = yaml === '' ? defaultConfig() : parseConfig(yaml, 't.yml');
  const p = new Pipeline(config, { keepTotals: true, clock, input: { decided: (s, preset, _how, d) => decisions.push([s, preset, d]) } });
  return { p, decisions };
}

function reportOf(yaml: string, lines: readonly string[]): unknown {
  const { p } = pipeline(yaml);
  for (const l of lines) p.line(l, 'src');
  p.finish();
  return JSON.parse(JSON.stringify(buildReport(p, p.config)));
}

describe('probes first, each gateway', () => {
  it.each(PRESET_NAMES)('%s: probes are counted with the preset their log shows, equal to giving it', (preset) => {
    const lines = log(preset, 20, 30);
    expect(reportOf('', lines)).toEqual(reportOf(`input:\n  preset: ${preset}\n`, lines));
    const { p, decisions } = pipeline();
    for (const l of lines) p.line(l, 'src');
    expect(p.presets()).toEqual({ src: preset });
    expect(p.metrics.requests.sum()).toBe(50);
    expect(p.metrics.requests.sum({ hit: 'true' })).toBe(30);
    // Where the probes carry no header field, they waited for the first request, which decided.
    const [, , detail] = decisions[0] as Decision;
    expect(detail).toMatchObject({ basis: 'evidence', held: PROBES_WITHOUT_EVIDENCE.includes(preset) ? 20 : 0 });
    expect(detail?.header).toBeDefined();
    expect(detail?.signature.length).toBeGreaterThan(0);
  });

  it('a Caddy log starting with 64 kube-probe lines is not envoy-json (both read `duration`): 300 hits', () => {
    const lines = log('caddy-json', DETECT_MAX_HELD_LINES, 300);
    const { p, decisions } = pipeline();
    for (const l of lines) p.line(l, 'src');
    p.finish();
    expect(p.presets()).toEqual({ src: 'caddy-json' });
    expect(p.metrics.requests.sum({ hit: 'true' })).toBe(300);
    // The 64 probes reached the bound before the first request: caddy by structure alone, said so.
    expect(decisions.map(([, preset, d]) => [preset, d?.basis])).toEqual([['caddy-json', 'signature']]);
    expect(decisions[0]?.[2]?.signature).toEqual(expect.arrayContaining(['resp_headers', 'logger', 'msg']));
    // And counted, for an alert to find.
    expect(p.inputDecisions.entries()).toEqual([[['src', 'signature'], 1]]);
  });

  it('serve: one Caddy probe and 2 s of quiet decide caddy-json by structure, never envoy-json', () => {
    let now = NOW;
    const { p, decisions } = pipeline('', () => now);
    p.line(JSON.stringify(PROBE['caddy-json'](0)), 'src');
    p.settle();
    expect(p.presets()).toEqual({ src: null });
    now += DETECT_WAIT_MS;
    p.settle();
    expect(decisions.map(([, preset, d]) => [preset, d?.basis])).toEqual([['caddy-json', 'signature']]);
    for (const l of log('caddy-json', 0, 10)) p.line(l, 'src');
    expect(p.metrics.requests.sum({ hit: 'true' })).toBe(10);
  });
});

describe('ties and bounds', () => {
  // Evidence for both default and nginx-json: neither is chosen on it.
  const both = JSON.stringify({ latency_ms: 5, response_headers: { 'x-anthropic-layer-id': LAYER }, request_time: '0.005', upstream_http_x_anthropic_layer_id: LAYER });

  it('a line that is evidence for two presets waits for one that decides, and is counted with it', () => {
    const { p, decisions } = pipeline();
    p.line(both, 'src');
    expect(p.presets()).toEqual({ src: null });
    expect(p.metrics.lines.sum()).toBe(0);
    p.line(JSON.stringify(REQUEST['nginx-json'](0, 100)), 'src');
    expect(decisions.map(([, preset, d]) => [preset, d?.basis, d?.held])).toEqual([['nginx-json', 'evidence', 1]]);
    expect(p.metrics.requests.sum()).toBe(2);
  });

  it('a tie at the bound is decided as a guess, and said to be one, with the candidates', () => {
    const { p, decisions } = pipeline();
    p.line(both, 'src');
    p.finish();
    expect(decisions).toHaveLength(1);
    const [, , d] = decisions[0] as Decision;
    expect(d).toMatchObject({ basis: 'ambiguous', held: 1 });
    expect(d?.candidates).toEqual(expect.arrayContaining(['default', 'nginx-json']));
    expect(p.inputDecisions.get(['src', 'ambiguous'])).toBe(1);
    expect(p.metrics.requests.sum()).toBe(1);
  });

  it('lines no preset reads are counted without a decision; the stream keeps detecting', () => {
    const { p } = pipeline();
    // default: missing_latency; nginx-json: bad_timestamp. No preset reads it.
    p.line('{"time_iso8601":"not a time","request_time":"0.1","latency_ms":"x"}', 'src');
    p.finish();
    expect(p.presets()).toEqual({ src: null });
    expect(p.metrics.lines.sum()).toBe(1);
    expect(p.metrics.requests.sum()).toBe(0);
  });
});

describe('per stream', () => {
  it('two files of one glob, two gateways: each read with its own preset; input_info says both', () => {
    const { p } = pipeline();
    const a = newStream('/var/log/*.jsonl', '/var/log/caddy.jsonl');
    const b = newStream('/var/log/*.jsonl', '/var/log/envoy.jsonl');
    const ca = log('caddy-json', 5, 10);
    const en = log('envoy-json', 5, 10);
    for (let i = 0; i < ca.length; i++) {
      p.line(ca[i] as string, '/var/log/*.jsonl', a);
      p.line(en[i] as string, '/var/log/*.jsonl', b);
    }
    expect(p.metrics.requests.sum({ hit: 'true' })).toBe(20);
    expect(p.metrics.requests.sum({ status_class: '2xx' })).toBe(30);
    expect(
      p.inputInfo
        .entries()
        .filter(([, v]) => v === 1)
        .map(([l]) => l[1])
        .sort(),
    ).toEqual(['caddy-json', 'envoy-json']);
  });

  it('a new generation of a path whose probes show nothing decisive is read like the one before, silently', () => {
    let now = NOW;
    const { p, decisions } = pipeline('', () => now);
    const path = '/var/log/caddy.jsonl';
    const gen1 = newStream('g', path);
    for (const l of log('caddy-json', 0, 3)) p.line(l, 'g', gen1);
    const gen2 = newStream('g', path);
    // Lines Caddy and Envoy both read, with neither's structure: the previous generation settles it.
    p.line('{"duration":0.001,"status":200}', 'g', gen2);
    now += DETECT_WAIT_MS;
    p.settle();
    expect(decisions.map(([, preset, d]) => [preset, d?.basis])).toEqual([['caddy-json', 'evidence']]);
    expect(p.metrics.requests.sum({ status_class: '2xx' })).toBe(4);
  });

  it('a stream rotated into another format (stdin carrying two files) is detected again, probes included', () => {
    const { p, decisions } = pipeline();
    const lines = [...log('envoy-json', 2, 5), ...log('caddy-json', 4, 5)];
    for (const l of lines) p.line(l, 'stdin');
    p.finish();
    expect(decisions.map(([, preset]) => preset)).toEqual(['envoy-json', 'caddy-json']);
    expect(decisions[1]?.[2]?.previous).toBe('envoy-json');
    const expected = (reportOf('input:\n  preset: envoy-json\n', log('envoy-json', 2, 5)) as { records: number }).records + 9;
    expect(p.metrics.requests.sum()).toBe(expected);
    // Every Caddy line, the probes too, read as Caddy: a status, a route.
    expect(p.metrics.requests.sum({ status_class: 'unknown' })).toBe(0);
    expect(p.inputInfo.entries()).toEqual([
      [['stdin', 'envoy-json'], 0],
      [['stdin', 'caddy-json'], 1],
    ]);
  });
});

describe('held lines across a checkpoint', () => {
  it('held lines taken with the counters and offered again count once, with the preset the rest shows', () => {
    const path = '/var/log/caddy.jsonl';
    const lines = log('caddy-json', 20, 10);
    const before = pipeline().p;
    const s1 = newStream('src', path);
    for (const l of lines.slice(0, 20)) before.line(l, 'src', s1);
    expect(before.metrics.lines.sum()).toBe(0);
    const held = before.held();
    expect(held).toEqual([{ source: 'src', lineage: s1.lineage, path, lines: lines.slice(0, 20) }]);

    const after = pipeline().p;
    after.restoreHeld(held);
    const s2 = newStream('src', path);
    for (const l of lines.slice(20)) after.line(l, 'src', s2);
    expect(after.presets()).toEqual({ src: 'caddy-json' });
    expect(after.metrics.lines.sum()).toBe(30);
    expect(after.metrics.requests.sum({ status_class: '2xx' })).toBe(30);
  });

  it('restored held lines of a file that never grows again are decided on their own after the wait', () => {
    let now = NOW;
    const after = pipeline('', () => now).p;
    after.restoreHeld([{ source: 'src', lineage: 'src\u0000/x', path: '/x', lines: log('caddy-json', 3, 0) }]);
    now += DETECT_WAIT_MS;
    after.settle();
    expect(after.metrics.requests.sum({ status_class: '2xx' })).toBe(3);
  });
});

/** The type is used by the serve log; keep its fields in the detail (a compile-time check). */
const detailHasEvidence: Evidence extends Omit<DecisionDetail, 'path' | 'previous'> ? true : false = true;
void detailHasEvidence;
