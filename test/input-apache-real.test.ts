// Apache httpd for real: Debian's apache2 on 127.0.0.1 as a reverse proxy (mod_proxy_http) in front of the
// simulator, logging with exactly the README's LogFormat (read from README.md). Health probes come first
// (kube-probe GETs of the upstream's health path: no Zero-Plane header), then the known mix, whose opt-in
// headers include a zero-width space, a byte-order mark and a non-breaking space: Apache logs those bytes
// as \xhh, which is not JSON. `report` with no config must detect apache-json and give exactly the counts
// the client saw, the opt-in defects included; and the same with input.preset: apache-json given.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HEALTH_PATH } from '../src/simulate/protocol.js';
import { startSimulator, type RunningSimulator } from '../src/simulate/simulator.js';
import { BIN, waitFor } from './helpers/cli-process.js';
import { knownMix, nearestRank, sendMix, truthOf, type MixRequest, type MixResponse, type Truth } from './helpers/gateway-mix.js';
import { startApache, type Apache } from './helpers/gateways.js';
import { tempDir } from './helpers/temp-dir.js';

type Json = Record<string, unknown>;
/** More than the 64 lines a detector may hold before it must decide. */
const PROBES = 70;
const LAYER = /^zero-plane-v[0-9]+$/;

function logLines(path: string): string[] {
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter((l) => l !== '') : [];
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

function expectCounts(report: Json, truth: Truth): void {
  expect(report).toMatchObject({
    lines: truth.requests,
    records: truth.requests,
    requests: truth.requests,
    hits: truth.hits,
    degradedCount: truth.degradedCount,
    warmupHits: truth.warmupHits,
    warmupMisses: truth.warmupMisses,
    cachedCount: truth.cachedCount,
    downgrades: truth.downgrades,
    throttleModes: truth.throttleModes,
    optInHeader: truth.optInHeader,
    optInDefects: truth.optInDefects,
    statusClasses: truth.statusClasses,
    topStatusCodes: truth.topStatusCodes,
    headerParseErrors: {},
  });
  expect(Object.values(report.parseErrors as Record<string, number>).every((n) => n === 0), JSON.stringify(report.parseErrors)).toBe(true);
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

describe('Apache httpd in front of the simulator, configured as the README shows, health probes first', () => {
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
    for (const [key, q] of [['p50Seconds', 0.5], ['p99Seconds', 0.99], ['p999Seconds', 0.999]] as const) {
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
