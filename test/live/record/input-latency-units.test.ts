// Every latency encoding a gateway documents is read in its own unit, and a latency no request can have is
// a parse error of its own (implausible_latency), never a sample. Caddy writes `duration` as float seconds
// (default), integer nanoseconds (`duration_format nano`) or a Go duration string (`duration_format
// string`), all under the same key: each line is read right, from bytes and from text alike.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { defaultConfig } from '../../../src/config/schema.js';
import { recordParserFor } from '../../../src/pipeline.js';
import type { ParseResult } from '../../../src/record/parse-record.js';
import type { PresetName } from '../../../src/record/presets.js';
import { SignalClassifier } from '../../../src/signals/classify.js';
import { runCli } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

function parserFor(preset: PresetName, yaml = '') {
  const config = yaml ? parseConfig(yaml, 'test.yml') : defaultConfig();
  return recordParserFor(config, new SignalClassifier(config.headers), preset);
}

/** Both ways a line is read (bytes in place, text): they must agree; the latency in seconds, or the reason. */
function latency(p: ReturnType<typeof parserFor>, line: string): number | string {
  const fromText = p.parse(line);
  const buf = Buffer.from(`xx${line}yy`);
  const fromBytes = p.parseBytes(buf, 2, buf.length - 2) ?? fromText;
  const seconds = (r: ParseResult) => (r.ok ? r.record.latencySeconds : r.reason);
  expect(seconds(fromBytes), `bytes and text disagree on ${line}`).toEqual(seconds(fromText));
  return seconds(fromText);
}

const caddy = (duration: string) =>
  `{"level":"info","ts":1764669600.5,"logger":"http.log.access.log0","msg":"handled request","request":{"uri":"/v1/messages","headers":{"X-Model":["m"]}},"duration":${duration},"status":200,"resp_headers":{"X-Anthropic-Layer-Id":["zero-plane-v1"]}}`;

describe('Caddy durations', () => {
  const p = parserFor('caddy-json');

  it('float seconds (the default duration_format)', () => {
    expect(latency(p, caddy('0.183042117'))).toBeCloseTo(0.183042117, 12);
    expect(latency(p, caddy('1.5e-05'))).toBeCloseTo(0.000015, 12);
    expect(latency(p, caddy('12.5'))).toBeCloseTo(12.5, 12);
  });

  it("integer nanoseconds (duration_format nano), as Debian's Caddy 2.6 writes them", () => {
    expect(latency(p, caddy('183042117'))).toBeCloseTo(0.183042117, 12);
    expect(latency(p, caddy('13420'))).toBeCloseTo(0.00001342, 12);
    // 10 minutes of a streamed answer, still nanoseconds, not 19 years of seconds.
    expect(latency(p, caddy('600000000000'))).toBeCloseTo(600, 9);
  });

  it('Go duration strings (duration_format string)', () => {
    expect(latency(p, caddy('"183.042117ms"'))).toBeCloseTo(0.183042117, 12);
    expect(latency(p, caddy('"12.057µs"'))).toBeCloseTo(0.000012057, 12);
    expect(latency(p, caddy('"350us"'))).toBeCloseTo(0.00035, 12);
    expect(latency(p, caddy('"2.5s"'))).toBeCloseTo(2.5, 12);
    expect(latency(p, caddy('"1m2.5s"'))).toBeCloseTo(62.5, 12);
    expect(latency(p, caddy('"0s"'))).toBe(0);
    expect(latency(p, caddy('"-1.5ms"'))).toBe('negative_latency');
    expect(latency(p, caddy('"1.5 parsecs"'))).toBe('bad_latency');
  });

  it('an explicit input.latencyUnit wins: integers are then in that unit', () => {
    const inSeconds = parserFor('caddy-json', 'input:\n  latencyUnit: s\n');
    expect(latency(inSeconds, caddy('2'))).toBe(2);
    expect(latency(inSeconds, caddy('1800'))).toBe(1800);
    const inNanos = parserFor('caddy-json', 'input:\n  latencyUnit: ns\n');
    expect(latency(inNanos, caddy('183042117'))).toBeCloseTo(0.183042117, 12);
  });
});

describe("the other presets' documented encodings", () => {
  it('Traefik Duration: integer nanoseconds', () => {
    const p = parserFor('traefik-json');
    expect(latency(p, '{"StartUTC":"2026-12-02T10:00:00Z","Duration":183042117,"DownstreamStatus":200}')).toBeCloseTo(0.183042117, 12);
  });

  it('Envoy %DURATION%: integer milliseconds', () => {
    const p = parserFor('envoy-json');
    expect(latency(p, '{"start_time":"2026-12-02T10:00:00.000Z","duration":183,"response_code":200}')).toBeCloseTo(0.183, 12);
  });

  it('nginx $upstream_response_time: seconds, a list after retries', () => {
    const p = parserFor('nginx-json');
    expect(latency(p, '{"time_iso8601":"2026-12-02T10:00:00+00:00","upstream_response_time":"0.183","status":"200"}')).toBeCloseTo(0.183, 12);
    expect(latency(p, '{"time_iso8601":"2026-12-02T10:00:00+00:00","upstream_response_time":"0.050, 0.183","status":"200"}')).toBeCloseTo(0.183, 12);
  });

  it('HAProxy %Ta and Kong latencies.request: milliseconds', () => {
    expect(latency(parserFor('haproxy-json'), '{"accept_ts":"1764669600.123","ta_ms":"183","status":"200"}')).toBeCloseTo(0.183, 12);
    expect(latency(parserFor('kong-json'), '{"started_at":1764669600123,"latencies":{"request":183},"response":{"status":200}}')).toBeCloseTo(0.183, 12);
  });
});

describe('implausible latencies', () => {
  it('over input.maxLatency (default 1h) or negative: a parse error of its own, in every form', () => {
    const p = parserFor('default');
    expect(latency(p, '{"latency_ms":3600000}')).toBe(3600);
    expect(latency(p, '{"latency_ms":3600001}')).toBe('implausible_latency');
    expect(latency(p, '{"latency_ms":"3600001"}')).toBe('implausible_latency');
    expect(latency(p, '{"latency_ms":"3600000.5"}')).toBe('implausible_latency');
    expect(latency(p, '{"latency_ms":-1}')).toBe('negative_latency');
    // Caddy nano read as seconds was the bug: 122,980,416 s. Read as seconds explicitly, it is no sample.
    const caddyInSeconds = parserFor('caddy-json', 'input:\n  latencyUnit: s\n');
    expect(latency(caddyInSeconds, caddy('122980416'))).toBe('implausible_latency');
    expect(latency(parserFor('caddy-json'), caddy('"2h"'))).toBe('implausible_latency');
    // nginx's list: the attempt read is bounded too.
    expect(latency(parserFor('nginx-json'), '{"upstream_response_time":"0.050, 7200.0"}')).toBe('implausible_latency');
  });

  it('input.maxLatency is config: a lower bound applies', () => {
    const p = parserFor('default', 'input:\n  maxLatency: 30s\n');
    expect(latency(p, '{"latency_ms":30000}')).toBe(30);
    expect(latency(p, '{"latency_ms":30001}')).toBe('implausible_latency');
  });

  it('report counts them under implausible_latency and never as a sample', () => {
    const dir = tempDir('zp-units-');
    const log = join(dir, 'caddy.jsonl');
    writeFileSync(log, `${caddy('0.183')}\n${caddy('183000000')}\n${caddy('"183ms"')}\n${caddy('"90m"')}\n`);
    const cfg = join(dir, 'c.yml');
    writeFileSync(cfg, 'input:\n  preset: caddy-json\n');
    const r = runCli(['report', '--format', 'json', '--config.file', cfg, log]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { lines: number; records: number; parseErrors: Record<string, number>; p99Seconds: number };
    expect(report.lines).toBe(4);
    expect(report.records).toBe(3);
    expect(report.parseErrors.implausible_latency).toBe(1);
    expect(report.p99Seconds).toBeCloseTo(0.183, 2);
  });

  it('a bad input.maxLatency exits 2 naming the file and the key', () => {
    const dir = tempDir('zp-units-');
    for (const bad of ['soon', '0s', '-5m', '12']) {
      const cfg = join(dir, 'c.yml');
      writeFileSync(cfg, `input:\n  maxLatency: ${JSON.stringify(bad)}\n`);
      const r = runCli(['report', '--config.file', cfg, cfg]);
      expect(r.code, bad).toBe(2);
      expect(r.stderr).toContain('c.yml');
      expect(r.stderr).toContain('input.maxLatency');
    }
  });
});
