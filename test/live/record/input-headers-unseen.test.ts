// A log with usable latencies but its headers where the preset does not look is said out loud, per gateway:
// each case is a gateway fixture (test/golden) whose header fields were moved where its preset does not look
// (nginx's $sent_http_*, a team's own prefix or object, Traefik's default that drops every header, a Caddy
// whose upstream sends none). `report` prints the hint (the paths looked at, the fix), lists it under
// inputHeadersUnseen and exits 1; the fix it names, applied, gives the counts of the untouched fixture.
// A real `serve` following the log warns once, with the same paths and fix, and scraped over loopback
// sets zero_plane_exporter_headers_unseen{source} to 1, then 0 once a record with a header arrives. The
// alert on that gauge is tested by promtool (test/rules/headers.test.yml). And the negatives: headers
// present with absent values everywhere, or on some records only, are not warned about.
import { execFile } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { presetCandidates } from '../../../src/record/source-inputs.js';
import { SignalClassifier } from '../../../src/signals/classify.js';
import { BIN, startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

type Json = Record<string, unknown>;
const GOLDEN = new URL('../../golden/', import.meta.url);
const HEADER_NAMES = ['x-anthropic-layer-id', 'x-anthropic-delay-profile', 'x-anthropic-cached', 'x-anthropic-downgrade-reason'];

interface Report {
  code: number;
  json: Json;
  stderr: string;
}

async function report(args: string[], env: Record<string, string> = {}): Promise<Report> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [BIN, 'report', '--format', 'json', ...args], {
      maxBuffer: 1 << 26,
      env: { ...process.env, ...env },
    });
    return { code: 0, json: JSON.parse(stdout) as Json, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    if (typeof e.code !== 'number') throw err;
    // A usage error (exit 2) prints no report.
    return { code: e.code, json: e.stdout ? (JSON.parse(e.stdout) as Json) : {}, stderr: e.stderr ?? '' };
  }
}

function fixture(name: string): Json[] {
  return readFileSync(new URL(`${name}.ndjson`, GOLDEN), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .flatMap((l) => {
      try {
        const o = JSON.parse(l) as unknown;
        return o !== null && typeof o === 'object' && !Array.isArray(o) ? [o as Json] : [];
      } catch {
        return [];
      }
    });
}

/** `objects` repeated to at least `n` lines. */
function repeated(objects: Json[], n: number): Json[] {
  const out: Json[] = [];
  while (out.length < n) out.push(...objects);
  return out;
}

function ndjson(objects: Json[]): string {
  return objects.map((o) => `${JSON.stringify(o)}\n`).join('');
}

/** A copy of `o` with every top-level key that starts with `from` renamed to start with `to`. */
function renamePrefix(o: Json, from: string, to: string): Json {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k.startsWith(from) ? to + k.slice(from.length) : k, v]));
}

/** A copy of `o` with the object at `path` (dotted) moved to `to` (dotted, its parents created). */
function move(o: Json, path: string, to: string): Json {
  const copy = structuredClone(o);
  const parts = path.split('.');
  let parent = copy;
  for (const p of parts.slice(0, -1)) parent = parent[p] as Json;
  const value = parent[parts.at(-1) as string];
  delete parent[parts.at(-1) as string];
  const target = to.split('.');
  let at = copy;
  for (const p of target.slice(0, -1)) at = (at[p] ??= {}) as Json;
  at[target.at(-1) as string] = value;
  return copy;
}

interface Case {
  gateway: string;
  preset: string;
  /** The golden fixture the log is made from. */
  fixture: string;
  /** Where the fixture's preset looks: `input.preset` given, or undefined for auto. */
  configured: boolean;
  /** The fixture's line with its response headers moved where the preset does not look. */
  hide(o: Json): Json;
  /** Where the preset looks for x-anthropic-layer-id, as the hint names it. */
  layerPath: string;
  /** The fix the hint must name, and the config that applies it; or, when nothing in the lines holds them, the advice. */
  fix?: { text: string; yaml: string };
  advice?: RegExp;
}

const CASES: Case[] = [
  {
    gateway: 'nginx with $sent_http_* names',
    preset: 'nginx-json',
    fixture: 'real-nginx',
    configured: false,
    hide: (o) => renamePrefix(o, 'upstream_http_', 'sent_http_'),
    layerPath: 'upstream_http_x_anthropic_layer_id',
    fix: { text: 'input.responseHeaders: { prefix: "sent_http_" }', yaml: '  responseHeaders: { prefix: sent_http_ }\n' },
  },
  {
    gateway: 'Envoy with its own field names',
    preset: 'envoy-json',
    fixture: 'preset-envoy-json',
    configured: true,
    hide: (o) => renamePrefix(o, 'resp_x_', 'upstream_resp_x_'),
    layerPath: 'resp_x_anthropic_layer_id',
    fix: { text: 'input.responseHeaders: { prefix: "upstream_resp_" }', yaml: '  responseHeaders: { prefix: upstream_resp_ }\n' },
  },
  {
    gateway: 'Caddy whose upstream sends none of the headers',
    preset: 'caddy-json',
    fixture: 'real-caddy',
    configured: true,
    hide: (o) => {
      const copy = structuredClone(o);
      const resp = copy.resp_headers as Json;
      for (const k of Object.keys(resp)) if (k.toLowerCase().startsWith('x-anthropic-')) delete resp[k];
      return copy;
    },
    layerPath: 'resp_headers.x-anthropic-layer-id',
    advice: /Caddy logs the response headers it sends under resp_headers/,
  },
  {
    gateway: "HAProxy with a team's own capture names",
    preset: 'haproxy-json',
    fixture: 'real-haproxy',
    configured: true,
    hide: (o) => renamePrefix(o, 'capture_res_', 'res_hdr_'),
    layerPath: 'capture_res_x_anthropic_layer_id',
    fix: { text: 'input.responseHeaders: { prefix: "res_hdr_" }', yaml: '  responseHeaders: { prefix: res_hdr_ }\n' },
  },
  {
    gateway: 'Kong with the response headers under another object',
    preset: 'kong-json',
    fixture: 'preset-kong-json',
    configured: true,
    hide: (o) => move(o, 'response.headers', 'upstream.response_headers'),
    layerPath: 'response.headers.x-anthropic-layer-id',
    fix: { text: 'input.responseHeaders: { path: "upstream.response_headers" }', yaml: '  responseHeaders: { path: upstream.response_headers }\n' },
  },
  {
    gateway: 'Traefik without kept headers (its default)',
    preset: 'traefik-json',
    fixture: 'preset-traefik-json',
    configured: true,
    hide: (o) => Object.fromEntries(Object.entries(o).filter(([k]) => !k.startsWith('downstream_') && !k.startsWith('request_'))),
    layerPath: 'downstream_X-Anthropic-Layer-Id',
    advice: /Traefik drops headers from its access log unless kept/,
  },
  {
    gateway: "default with a team's own keys",
    preset: 'default',
    fixture: 'healthy-window',
    configured: true,
    hide: (o) => move(o, 'response_headers', 'gateway.response'),
    layerPath: 'response_headers.x-anthropic-layer-id',
    fix: { text: 'input.responseHeaders: { path: "gateway.response" }', yaml: '  responseHeaders: { path: gateway.response }\n' },
  },
];

/** Records per log: more than input.headerWatch.records (1000), so the default bound decides. */
const RECORDS = 1200;

function caseFiles(c: Case): { dir: string; log: string; original: string; config: string; fixed: string | undefined; lines: number } {
  const dir = tempDir('zp-headers-unseen-');
  const objects = repeated(fixture(c.fixture), RECORDS);
  const log = join(dir, 'gateway.log');
  const original = join(dir, 'original.log');
  writeFileSync(log, ndjson(objects.map(c.hide)));
  writeFileSync(original, ndjson(objects));
  const preset = `  preset: ${c.configured ? c.preset : 'auto'}\n`;
  const config = join(dir, 'zp.yml');
  writeFileSync(config, `input:\n${preset}alerts:\n  minRequests: 1\n`);
  let fixed: string | undefined;
  if (c.fix !== undefined) {
    fixed = join(dir, 'fixed.yml');
    writeFileSync(fixed, `input:\n${preset}${c.fix.yaml}alerts:\n  minRequests: 1\n`);
  }
  return { dir, log, original, config, fixed, lines: objects.length };
}

function pathsOf(c: Case): string[] {
  const at = c.layerPath;
  return HEADER_NAMES.map((n) => {
    if (at.endsWith('X-Anthropic-Layer-Id'))
      return at.replace(
        'X-Anthropic-Layer-Id',
        n
          .split('-')
          .map((p) => p[0]?.toUpperCase() + p.slice(1))
          .join('-'),
      );
    return at.endsWith('x-anthropic-layer-id') ? at.replace('x-anthropic-layer-id', n) : at.replace('x_anthropic_layer_id', n.replaceAll('-', '_'));
  });
}

describe('report: a log whose headers are never where its preset looks', () => {
  it.each(CASES.map((c) => [c.gateway, c] as const))('%s: hint on stderr, inputHeadersUnseen, exit 1; the fix gives the untouched counts', async (_name, c) => {
    const f = caseFiles(c);
    const truth = await report(['--config.file', f.config, f.original]);
    expect(truth.code, truth.stderr).toBe(0);
    expect(truth.json.inputHeadersUnseen).toEqual([]);
    expect(truth.json.hits as number, 'the untouched fixture has hits').toBeGreaterThan(0);

    const r = await report(['--config.file', f.config, f.log]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.json.input).toEqual({ [f.log]: c.preset });
    // The opt-in request header alone is no header found: every other signal comes from the response's.
    if (c.fixture === 'real-nginx') expect(readFileSync(f.log, 'utf8')).toContain('"http_x_anthropic_experimental":"zero-plane-2024"');
    expect(r.json.records).toBe(truth.json.records);
    expect(r.json.hits).toBe(0);
    const paths = pathsOf(c);
    const unseen = r.json.inputHeadersUnseen as Json[];
    expect(unseen).toHaveLength(1);
    expect(unseen[0]).toMatchObject({ source: f.log, preset: c.preset, records: 1000, paths, seenAfter: null });
    const hint = r.stderr.split('\n').find((l) => l.includes('no header found')) ?? '';
    expect(hint, r.stderr).toContain(f.log);
    expect(hint).toContain('none of the first 1000 records');
    for (const p of paths) expect(hint).toContain(p);
    expect(r.stderr).toMatch(new RegExp(`not one record of .*gateway\\.log \\(${f.lines} records\\) carried a wanted response header; exit 1`));
    if (c.fix !== undefined) {
      expect((unseen[0] as Json).fixes).toContain(c.fix.text);
      expect(hint).toContain(c.fix.text);
      const fixed = await report(['--config.file', f.fixed as string, f.log]);
      expect(fixed.code, fixed.stderr).toBe(0);
      expect(fixed.json.inputHeadersUnseen).toEqual([]);
      for (const key of ['records', 'hits', 'degradedCount', 'warmupHits', 'warmupMisses', 'cachedCount', 'downgrades', 'statusClasses']) {
        expect(fixed.json[key], key).toEqual(truth.json[key]);
      }
    } else {
      expect((unseen[0] as Json).fixes).toEqual([]);
      expect(hint).toMatch(c.advice as RegExp);
    }
  });

  it('a log shorter than the bound, none of whose records carries a header, is said at its end (records: all of them)', async () => {
    const c = CASES[0] as Case;
    const dir = tempDir('zp-headers-short-');
    const log = join(dir, 'short.log');
    writeFileSync(log, ndjson(fixture(c.fixture).map(c.hide)));
    const r = await report([log]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.json.inputHeadersUnseen).toMatchObject([{ source: log, preset: 'nginx-json', records: 42, seenAfter: null }]);
  });

  it('headers present with absent values everywhere (every request a non-hit, layer id "-"): no hint, exit 0', async () => {
    const dir = tempDir('zp-headers-absent-');
    const log = join(dir, 'absent.log');
    const objects = repeated(fixture('real-nginx'), RECORDS).map((o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, k.startsWith('upstream_http_x_anthropic_') ? '-' : v])));
    writeFileSync(log, ndjson(objects));
    const r = await report([log]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.hits).toBe(0);
    expect(r.json.inputHeadersUnseen).toEqual([]);
    expect(r.stderr).not.toContain('no header found');
  });

  it('headers on some records only (1 in 40): no hint, exit 0', async () => {
    const dir = tempDir('zp-headers-some-');
    const log = join(dir, 'some.log');
    const objects = repeated(fixture('healthy-window'), RECORDS).map((o, i) => (i % 40 === 39 ? o : move(o, 'response_headers', 'elsewhere')));
    writeFileSync(log, ndjson(objects));
    const r = await report([log]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.hits as number).toBeGreaterThan(0);
    expect(r.json.inputHeadersUnseen).toEqual([]);
    expect(r.stderr).not.toContain('no header found');
  });
});

describe('report on two threads: the verdict combines both halves as one pass', () => {
  const healthy = fixture('healthy-window');
  const hidden = (o: Json) => move(o, 'response_headers', 'elsewhere');
  /** n headerless records, then m with headers. */
  const log = (n: number, m: number) => [...repeated(healthy, n).slice(0, n).map(hidden), ...repeated(healthy, m).slice(0, m)];
  it.each([
    ['all 1300 headerless', log(1300, 0), 1, null],
    ['1200 headerless, then headers (the first ones in the second half)', log(1200, 100), 0, 1200],
    ['800 headerless, then headers (the bound is never reached)', log(800, 500), 0, undefined],
    ['400 headerless, then headers (in the first half)', log(400, 900), 0, undefined],
  ] as const)('%s', async (_name, objects, code, seenAfter) => {
    const dir = tempDir('zp-headers-parallel-');
    const file = join(dir, 'split.log');
    writeFileSync(file, ndjson([...objects]));
    const one = await report([file]);
    const two = await report(['--log.level=debug', file], { ZP_REPORT_PARALLEL_MIN_BYTES: '0' });
    expect(two.stderr, 'read on two threads').toContain('report: 2 threads');
    for (const r of [one, two]) {
      expect(r.code, r.stderr).toBe(code);
      const unseen = r.json.inputHeadersUnseen as Json[];
      if (seenAfter === undefined) expect(unseen).toEqual([]);
      else expect(unseen).toMatchObject([{ source: file, records: 1000, seenAfter }]);
    }
    expect(two.json.inputHeadersUnseen).toEqual(one.json.inputHeadersUnseen);
    expect(two.json.hits).toBe(one.json.hits);
  });
});

describe('serve: warns once, and the gauge says it until a header arrives', () => {
  let serve: ServeProcess | undefined;
  afterEach(async () => {
    await serve?.stop();
    serve = undefined;
  });

  const headersWarnings = (s: ServeProcess) => s.logs.filter((e) => String(e.msg).startsWith('no header found'));

  async function scrape(s: ServeProcess): Promise<string> {
    return (await fetch(`${s.url}/metrics`, { headers: { accept: 'text/plain' } })).text();
  }

  function gauge(text: string, source: string): number | undefined {
    const line = text.split('\n').find((l) => l.startsWith(`zero_plane_exporter_headers_unseen{source="${source}"} `));
    return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
  }

  it.each(CASES.map((c) => [c.gateway, c] as const))(
    '%s: one warning naming the paths and the fix; headers_unseen 1, then 0',
    async (_name, c) => {
      const f = caseFiles(c);
      appendFileSync(f.config, 'sources:\n  startAt: start\n');
      serve = await startServe(['--config.file', f.config, f.log]);
      const s = serve;
      await waitFor(async () => (gauge(await scrape(s), f.log) === 1 ? true : undefined), 20_000, 'zero_plane_exporter_headers_unseen 1');
      const warnings = headersWarnings(s);
      expect(warnings).toHaveLength(1);
      const w = warnings[0] as Json;
      expect(w).toMatchObject({ level: 'warn', source: f.log, preset: c.preset, records: 1000, paths: pathsOf(c).join(',') });
      if (c.fix !== undefined) expect(w.fix).toContain(c.fix.text);
      else expect(w.fix).toMatch(c.advice as RegExp);

      // A record with the headers where the preset looks: the source is understood after all.
      appendFileSync(f.log, `${readFileSync(f.original, 'utf8').split('\n')[0] as string}\n`);
      await waitFor(async () => (gauge(await scrape(s), f.log) === 0 ? true : undefined), 20_000, 'zero_plane_exporter_headers_unseen 0');
      expect(s.logs.some((e) => e.msg === 'header found after all' && e.source === f.log)).toBe(true);
      expect(headersWarnings(s)).toHaveLength(1);
    },
    60_000,
  );

  it('input.headerWatch.duration: a quiet source with fewer records is said after that long', async () => {
    const c = CASES[0] as Case;
    const dir = tempDir('zp-headers-duration-');
    const log = join(dir, 'quiet.log');
    writeFileSync(log, ndjson(fixture(c.fixture).slice(0, 5).map(c.hide)));
    const config = join(dir, 'zp.yml');
    writeFileSync(config, 'input:\n  headerWatch: { records: 100000, duration: 1s }\nsources:\n  startAt: start\n');
    serve = await startServe(['--config.file', config, log]);
    const s = serve;
    await waitFor(async () => (gauge(await scrape(s), log) === 1 ? true : undefined), 20_000, 'zero_plane_exporter_headers_unseen 1');
    expect(headersWarnings(s)).toMatchObject([{ source: log, records: 5 }]);
  }, 60_000);

  it('headers with absent values everywhere: no warning, the gauge is 0', async () => {
    const dir = tempDir('zp-headers-absent-serve-');
    const log = join(dir, 'absent.log');
    const objects = repeated(fixture('real-nginx'), RECORDS).map((o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, k.startsWith('upstream_http_x_anthropic_') ? '-' : v])));
    writeFileSync(log, ndjson(objects));
    const config = join(dir, 'zp.yml');
    writeFileSync(config, 'input:\n  headerWatch: { records: 1000, duration: 1s }\nsources:\n  startAt: start\n');
    serve = await startServe(['--config.file', config, log]);
    const s = serve;
    const text = await waitFor(
      async () => {
        const t = await scrape(s);
        return t.includes(`zero_plane_exporter_lines_total{source="${log}"} ${objects.length}`) ? t : undefined;
      },
      20_000,
      'every line read',
    );
    expect(gauge(text, log)).toBe(0);
    // Past the duration bound too.
    await new Promise((r) => setTimeout(r, 1500));
    expect(gauge(await scrape(s), log)).toBe(0);
    expect(headersWarnings(s)).toEqual([]);
  }, 60_000);
});

describe('the header check of a line read from bytes', () => {
  it('says what the check of the parsed line says, for every preset on every fixture and its hidden copies', () => {
    const config = loadConfig(undefined);
    const candidates = presetCandidates(config, new SignalClassifier(config.headers));
    const lines = ['real-nginx', 'preset-envoy-json', 'real-caddy', 'real-haproxy', 'preset-kong-json', 'preset-traefik-json', 'healthy-window', 'mixed-case-headers'].flatMap((name) => {
      const objects = fixture(name);
      const hidden = CASES.filter((c) => c.fixture === name).flatMap((c) => objects.map(c.hide));
      return [...objects, ...hidden].map((o) => JSON.stringify(o));
    });
    // Header fields whose values are not strings: null, numbers, arrays, nested objects.
    lines.push('{"latency_ms":1,"response_headers":{"X-Anthropic-Layer-Id":null}}', '{"latency_ms":1,"response_headers":{"x-anthropic-cached":true}}');
    lines.push('{"duration":1,"resp_x_anthropic_layer_id":null}', '{"duration":1,"resp_headers":{"x-anthropic-delay-profile":{"a":1}}}', '{"duration":1,"resp_headers":"x-anthropic-layer-id"}');
    let carried = 0;
    for (const c of candidates) {
      for (const line of lines) {
        const want = c.parser.carriesResponseHeaders(JSON.parse(line));
        const buf = Buffer.from(`  ${line}\n`);
        expect(c.parser.carriesResponseHeadersBytes(buf, 2, buf.length - 1), `${c.preset}: ${line.slice(0, 120)}`).toBe(want);
        if (want) carried++;
      }
    }
    expect(carried).toBeGreaterThan(50);
  });
});

describe('input.headerWatch', () => {
  it.each([
    ['headerWatch:\n    records: 0\n', /zp\.yml:3: input\.headerWatch\.records: Too small/],
    ['headerWatch: { duration: soon }\n', /zp\.yml:2: input\.headerWatch\.duration: "soon" is not a duration/],
    ['headerWatch: { record: 5 }\n', /zp\.yml:2: input\.headerWatch: Unrecognized key: "record"/],
  ])('bad config %j exits 2 naming file, line and key', async (yaml, message) => {
    const dir = tempDir('zp-headers-config-');
    const config = join(dir, 'zp.yml');
    writeFileSync(config, `input:\n  ${yaml}`);
    const log = join(dir, 'empty.log');
    writeFileSync(log, '');
    const r = await report(['--config.file', config, log]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it("records: the bound is the config's (a hint at 50 records, with records: 50)", async () => {
    const c = CASES[0] as Case;
    const dir = tempDir('zp-headers-bound-');
    const log = join(dir, 'gateway.log');
    writeFileSync(log, ndjson(repeated(fixture(c.fixture), 100).map(c.hide)));
    const config = join(dir, 'zp.yml');
    writeFileSync(config, 'input:\n  headerWatch: { records: 50 }\n');
    const r = await report(['--config.file', config, log]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.json.inputHeadersUnseen).toMatchObject([{ records: 50, seenAfter: null }]);
    expect(r.stderr).toContain('none of the first 50 records');
  });
});
