// Apache httpd for real: Debian's apache2 on 127.0.0.1 as a reverse proxy (mod_proxy_http) in front of the
// simulator, logging with exactly the LogFormat of docs/gateways.md (read from that page). Health probes come first
// (kube-probe GETs of the upstream's health path: no Zero-Plane header), then the known mix, whose opt-in
// headers include a zero-width space, a byte-order mark and a non-breaking space: Apache logs those bytes
// as \xhh, which is not JSON. `report` with no config must detect apache-json and give exactly the counts
// the client saw, the opt-in defects included; and the same with input.preset: apache-json given. `serve`
// following the log stays exact across Apache's own rotation: mv, then a graceful restart.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HEALTH_PATH } from '../../../src/simulate/protocol.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulate/simulator.js';
import { BIN, isOpenWebhookWarning, startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { knownMix, nearestRank, sendMix, truthOf, type MixRequest, type MixResponse, type Truth, expectReportCounts as expectCounts } from '../../helpers/gateway-mix.js';
import { startApache, type Apache } from '../../helpers/gateways.js';
import { tempDir } from '../../helpers/temp-dir.js';

type Json = Record<string, unknown>;
/** More than the 64 lines a detector may hold before it must decide. */
const PROBES = 70;
const LAYER = /^zero-plane-v[0-9]+$/;

function logLines(path: string): string[] {
  return existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
    : [];
}

/** GETs of the health path, as a kubelet sends them: no body, no Zero-Plane or model header. */
async function sendProbes(baseUrl: string, n: number): Promise<{ requests: MixRequest[]; responses: MixResponse[] }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const requests: MixRequest[] = [];
  const responses: MixResponse[] = [];
  try {
    for (let i = 0; i < n; i++) {
      requests.push({ path: HEALTH_PATH, body: '', optIn: 'missing', optInValue: undefined, model: '', cohort: '', faults: {} });
      responses.push(
        await new Promise<MixResponse>((resolve, reject) => {
          const req = http.get(new URL(HEALTH_PATH, baseUrl), { agent, headers: { 'user-agent': 'kube-probe/1.31' }, timeout: 10_000 }, (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
          });
          req.on('timeout', () => req.destroy(new Error('probe timed out')));
          req.on('error', reject);
        }),
      );
    }
  } finally {
    agent.destroy();
  }
  return { requests, responses };
}

async function reportJson(args: string[]): Promise<{ report: Json; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [BIN, 'report', '--format', 'json', ...args], { maxBuffer: 1 << 24 });
    return { report: JSON.parse(stdout) as Json, stderr, code: 0 };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { report: JSON.parse(e.stdout || '{}') as Json, stderr: e.stderr ?? '', code: e.code ?? -1 };
  }
}

/**
 * Hit latencies (seconds) as Apache logged them, read without the exporter's code: the \xhh escapes are only
 * in header values, so dropping them leaves JSON with the layer id and %D as they were.
 */
function loggedHitSeconds(lines: string[]): number[] {
  return lines
    .map((l) => JSON.parse(l.replace(/\\x[0-9a-fA-F]{2}/g, '').replace(/\\v/g, '')) as { duration_us: number; headers_out: Record<string, string> })
    .filter((o) => LAYER.test(o.headers_out['x-anthropic-layer-id'] ?? ''))
    .map((o) => o.duration_us / 1e6);
}

describe('Apache httpd in front of the simulator, configured as docs/gateways.md shows, health probes first', () => {
  let sim: RunningSimulator | undefined;
  let apache: Apache | undefined;
  let truth: Truth;
  let requests: MixRequest[];
  let responses: MixResponse[];

  beforeAll(async () => {
    sim = await startSimulator({ mode: 'strict', seed: 13 });
    apache = await startApache(tempDir('zp-apache-'), new URL(sim.url).host);
    const probes = await sendProbes(apache.url, PROBES);
    const mix = knownMix();
    const simulator = sim;
    const mixResponses = await sendMix(apache.url, mix, (f) => simulator.faults.set(f));
    requests = [...probes.requests, ...mix];
    responses = [...probes.responses, ...mixResponses];
    truth = truthOf(requests, responses);
    const log = apache.logPath;
    // Apache writes a request's line once it is done with it: wait until every request has one.
    await waitFor(() => (logLines(log).length >= requests.length ? true : undefined), 15_000, `${requests.length} lines in ${log}`);
  }, 120_000);

  afterAll(async () => {
    await apache?.stop();
    await sim?.close();
  });

  it('the mix came back as planned, and Apache wrote \\xhh escapes that are not JSON (so the checks below are about something)', () => {
    expect(responses.slice(0, PROBES).every((r) => r.status === 200 && r.headers['x-anthropic-layer-id'] === undefined)).toBe(true);
    expect(truth.requests).toBe(PROBES + 42);
    expect(truth.hits).toBe(31);
    expect(truth.degradedCount).toBe(3);
    expect(truth.optInHeader).toEqual({ valid: 35, missing: PROBES + 2, malformed: 5 });
    expect(truth.optInDefects).toEqual({ case: 1, invisible_char: 2, value: 1, whitespace: 1 });
    const lines = logLines((apache as Apache).logPath);
    expect(lines).toHaveLength(truth.requests);
    const escaped = lines.filter((l) => /\\x(e2|ef|c2)/.test(l));
    // U+200B, U+FEFF and U+00A0: the three opt-in values with a byte over 0x7f.
    expect(escaped).toHaveLength(3);
    for (const l of escaped) expect(() => JSON.parse(l)).toThrow();
  });

  it('report with no config detects apache-json and gives exactly the counts the client saw, opt-in defects included', async () => {
    const log = (apache as Apache).logPath;
    const { report, stderr, code } = await reportJson([log]);
    expect(code, stderr).toBe(0);
    expect(stderr).toBe('');
    expect(report.input).toEqual({ [log]: 'apache-json' });
    expectCounts(report, truth);
    const hitSeconds = loggedHitSeconds(logLines(log));
    expect(hitSeconds).toHaveLength(truth.hits);
    for (const [key, q] of [
      ['p50Seconds', 0.5],
      ['p99Seconds', 0.99],
      ['p999Seconds', 0.999],
    ] as const) {
      const want = nearestRank(hitSeconds, q);
      expect(Math.abs((report[key] as number) - want), `${key}: ${String(report[key])} vs ${want}`).toBeLessThanOrEqual(0.005 * want);
    }
  });

  it('report with input.preset: apache-json gives the same counts', async () => {
    const dir = tempDir('zp-apache-config-');
    const config = join(dir, 'zp.yml');
    writeFileSync(config, 'input:\n  preset: apache-json\n');
    const { report, stderr, code } = await reportJson(['--config.file', config, (apache as Apache).logPath]);
    expect(code, stderr).toBe(0);
    expectCounts(report, truth);
  });
});

/** The sum of every sample of `name` whose labels include `where`. */
function sum(text: string, name: string, where: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (m === null || m[1] !== name) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], (l[2] as string).replace(/\\(.)/g, '$1')]));
    if (Object.entries(where).every(([k, v]) => labels[k] === v)) total += Number(m[3]);
  }
  return total;
}

describe('serve following the Apache log, probes first', () => {
  let sim: RunningSimulator | undefined;
  let apache: Apache | undefined;
  let serve: ServeProcess | undefined;

  afterAll(async () => {
    await serve?.stop();
    await apache?.stop();
    await sim?.close();
  });

  it('stays exact across mv + apachectl graceful, with no config', async () => {
    sim = await startSimulator({ mode: 'strict', seed: 14 });
    apache = await startApache(tempDir('zp-apache-serve-'), new URL(sim.url).host);
    const log = apache.logPath;
    serve = await startServe([log]);
    const simulator = sim;
    const probes = await sendProbes(apache.url, 10);
    const mix = knownMix();
    const half = Math.floor(mix.length / 2);
    const first = await sendMix(apache.url, mix.slice(0, half), (f) => simulator.faults.set(f));
    await waitFor(() => (logLines(log).length >= 10 + half ? true : undefined), 15_000, 'the first half logged');
    renameSync(log, `${log}.1`);
    apache.graceful();
    // The restarted children write to the reopened file; wait until it is there.
    await waitFor(() => (existsSync(log) ? true : undefined), 15_000, `${log} reopened`);
    const second = await sendMix(apache.url, mix.slice(half), (f) => simulator.faults.set(f));
    const total = 10 + mix.length;
    await waitFor(() => (logLines(`${log}.1`).length + logLines(log).length >= total ? true : undefined), 15_000, `${total} lines`);
    expect(logLines(log).length, 'lines written after the graceful restart went to the new file').toBeGreaterThan(0);

    const t = truthOf([...probes.requests, ...mix], [...probes.responses, ...first, ...second]);
    const server = serve;
    const text = await waitFor(
      async () => {
        const body = await (await fetch(`${server.url}/metrics`)).text();
        return sum(body, 'zero_plane_exporter_lines_total') === total ? body : undefined;
      },
      15_000,
      'every line in /metrics',
    );
    expect(sum(text, 'zero_plane_exporter_input_info', { source: log, preset: 'apache-json' })).toBe(1);
    expect(sum(text, 'zero_plane_requests_total')).toBe(t.requests);
    expect(sum(text, 'zero_plane_requests_total', { hit: 'true' })).toBe(t.hits);
    expect(sum(text, 'zero_plane_degraded_requests_total')).toBe(t.degradedCount);
    for (const state of ['valid', 'missing', 'malformed'] as const) expect(sum(text, 'zero_plane_opt_in_header_total', { state }), state).toBe(t.optInHeader[state]);
    for (const [defect, n] of Object.entries(t.optInDefects)) expect(sum(text, 'zero_plane_opt_in_header_total', { state: 'malformed', defect }), defect).toBe(n);
    expect(sum(text, 'zero_plane_exporter_parse_errors_total')).toBe(0);
    expect(sum(text, 'zero_plane_exporter_file_rotations_total', { kind: 'rename' })).toBe(1);
    expect(serve.logs.filter((l) => l.level === 'warn' && !isOpenWebhookWarning(l))).toEqual([]);
  }, 120_000);
});
