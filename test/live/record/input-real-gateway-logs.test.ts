// A user's first run, for real: Debian's nginx, Caddy and HAProxy on 127.0.0.1 as reverse proxies in front
// of the simulator, each logging with exactly the block docs/gateways.md shows (read from that page), a known mix
// sent through each, and `report` on the gateway's own access log with no config. The format must be
// detected and every count must be what the client saw; the quantiles must be within 0.5 % of the exact
// nearest-rank values of the latencies the gateway logged. `serve` following the nginx log must stay exact
// across `mv` + `nginx -s reopen`.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, renameSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../../src/simulate/simulator.js';
import { BIN, isOpenWebhookWarning, startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { knownMix, nearestRank, sendMix, truthOf, type MixRequest, type MixResponse, expectReportCounts as expectCounts } from '../../helpers/gateway-mix.js';
import { startCaddy, startHaproxy, startNginx, type Gateway, type Nginx } from '../../helpers/gateways.js';
import { tempDir } from '../../helpers/temp-dir.js';

type Json = Record<string, unknown>;
const RELATIVE = 0.005;
const LAYER = /^zero-plane-v[0-9]+$/;

/** How each gateway writes the two things the quantile check needs, read straight from its JSON. */
const LOGGED: Record<Gateway['name'], (o: Json) => { layer: unknown; seconds: number }> = {
  nginx: (o) => ({ layer: o.upstream_http_x_anthropic_layer_id, seconds: Number(o.upstream_response_time || o.request_time) }),
  caddy: (o) => ({ layer: (o.resp_headers as Record<string, string[] | undefined>)['X-Anthropic-Layer-Id']?.[0], seconds: o.duration as number }),
  haproxy: (o) => ({ layer: o.capture_res_x_anthropic_layer_id, seconds: Number(o.ta_ms) / 1000 }),
};
const PRESET: Record<Gateway['name'], string> = { nginx: 'nginx-json', caddy: 'caddy-json', haproxy: 'haproxy-json' };

function logLines(path: string): string[] {
  return existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
    : [];
}

/** The gateway writes its log line after the response: wait until every request has one. */
async function waitForLines(paths: string[], n: number): Promise<void> {
  await waitFor(() => (paths.reduce((sum, p) => sum + logLines(p).length, 0) >= n ? true : undefined), 15_000, `${n} log lines in ${paths.join(', ')}`);
}

/** Hit latencies (seconds) as the gateway logged them. */
function loggedHitSeconds(gateway: Gateway['name'], lines: string[]): number[] {
  return lines
    .map((l) => LOGGED[gateway](JSON.parse(l) as Json))
    .filter((x) => typeof x.layer === 'string' && LAYER.test(x.layer))
    .map((x) => x.seconds);
}

function expectQuantilesNear(actual: { p50: unknown; p99: unknown; p999: unknown }, hitSeconds: number[]): void {
  for (const [name, q] of [
    ['p50', 0.5],
    ['p99', 0.99],
    ['p999', 0.999],
  ] as const) {
    const want = nearestRank(hitSeconds, q);
    const got = actual[name] as number;
    expect(Math.abs(got - want), `${name}: ${got} vs nearest-rank ${want}`).toBeLessThanOrEqual(RELATIVE * want);
  }
}

async function reportJson(file: string): Promise<{ report: Json; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [BIN, 'report', '--format', 'json', file], { maxBuffer: 1 << 24 });
    return { report: JSON.parse(stdout) as Json, stderr, code: 0 };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { report: JSON.parse(e.stdout ?? '{}') as Json, stderr: e.stderr ?? '', code: e.code ?? -1 };
  }
}

describe.each([
  ['nginx', startNginx],
  ['caddy', startCaddy],
  ['haproxy', startHaproxy],
] as const)('%s in front of the simulator, configured as docs/gateways.md shows', (name, start) => {
  let sim: RunningSimulator | undefined;
  let gateway: Gateway | undefined;
  let requests: MixRequest[];
  let responses: MixResponse[];

  beforeAll(async () => {
    sim = await startSimulator({ mode: 'strict', seed: 11 });
    gateway = await start(tempDir(`zp-${name}-`), new URL(sim.url).host);
    requests = knownMix();
    const simulator = sim;
    responses = await sendMix(gateway.url, requests, (f) => simulator.faults.set(f));
    await waitForLines([gateway.logPath], requests.length);
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await sim?.close();
  });

  it('the mix came back as planned (so the checks below are about something)', () => {
    const truth = truthOf(requests, responses);
    expect(truth.statusClasses).toEqual({ '2xx': 38, '4xx': 4 });
    // 429: two long conversations (strict mode) and the gateway's own answer; 400: stream: true.
    expect(truth.topStatusCodes).toEqual([
      { code: 200, count: 38 },
      { code: 429, count: 3 },
      { code: 400, count: 1 },
    ]);
    expect(truth.hits).toBe(31);
    expect(truth.degradedCount).toBe(3);
    expect(truth.cachedCount).toBe(1);
    expect(truth.downgrades).toEqual({ context_too_long: 2 });
    expect(truth.optInHeader).toEqual({ valid: 35, missing: 2, malformed: 5 });
  });

  it('report on its own access log, with no config, detects the format and gives exactly the counts the client saw', async () => {
    const g = gateway as Gateway;
    const truth = truthOf(requests, responses);
    const { report, stderr, code } = await reportJson(g.logPath);
    expect(code, stderr).toBe(0);
    // Understood, and every label path held a value: nothing to say.
    expect(stderr).toBe('');
    expect(report.input).toEqual({ [g.logPath]: PRESET[name] });
    expectCounts(report, truth);
    const hitSeconds = loggedHitSeconds(name, logLines(g.logPath));
    expect(hitSeconds).toHaveLength(truth.hits);
    expectQuantilesNear({ p50: report.p50Seconds, p99: report.p99Seconds, p999: report.p999Seconds }, hitSeconds);
  });
});

describe('serve following the nginx log', () => {
  let sim: RunningSimulator | undefined;
  let nginx: Nginx | undefined;
  let serve: ServeProcess | undefined;

  afterAll(async () => {
    await serve?.stop();
    await nginx?.stop();
    await sim?.close();
  });

  it('stays exact across mv + nginx -s reopen, with no config', async () => {
    const dir = tempDir('zp-nginx-serve-');
    sim = await startSimulator({ mode: 'strict', seed: 12 });
    nginx = await startNginx(dir, new URL(sim.url).host);
    const log = nginx.logPath;
    serve = await startServe([log]);
    const simulator = sim;
    const requests = knownMix();
    const half = Math.floor(requests.length / 2);
    const first = await sendMix(nginx.url, requests.slice(0, half), (f) => simulator.faults.set(f));
    await waitForLines([log], half);
    renameSync(log, `${log}.1`);
    nginx.reopen();
    const second = await sendMix(nginx.url, requests.slice(half), (f) => simulator.faults.set(f));
    await waitForLines([`${log}.1`, log], requests.length);
    expect(logLines(log).length, 'lines written after the reopen went to the new file').toBeGreaterThan(0);

    const truth = truthOf(requests, [...first, ...second]);
    const server = serve;
    const text = await waitFor(
      async () => {
        const t = await (await fetch(`${server.url}/metrics`)).text();
        return sum(t, 'zero_plane_exporter_lines_total') === requests.length ? t : undefined;
      },
      15_000,
      'every line in /metrics',
    );

    expect(sum(text, 'zero_plane_exporter_input_info', { source: log, preset: 'nginx-json' })).toBe(1);
    expect(sum(text, 'zero_plane_requests_total')).toBe(truth.requests);
    expect(sum(text, 'zero_plane_requests_total', { hit: 'true' })).toBe(truth.hits);
    for (const [cls, n] of Object.entries(truth.statusClasses)) expect(sum(text, 'zero_plane_requests_total', { status_class: cls }), cls).toBe(n);
    expect(sum(text, 'zero_plane_degraded_requests_total')).toBe(truth.degradedCount);
    expect(sum(text, 'zero_plane_warmup_total', { outcome: 'hit' })).toBe(truth.warmupHits);
    expect(sum(text, 'zero_plane_warmup_total', { outcome: 'miss' })).toBe(truth.warmupMisses);
    expect(sum(text, 'zero_plane_cached_responses_total')).toBe(truth.cachedCount);
    expect(sum(text, 'zero_plane_downgrades_total', { reason: 'context_too_long' })).toBe(truth.downgrades.context_too_long);
    for (const state of ['valid', 'missing', 'malformed'] as const) expect(sum(text, 'zero_plane_opt_in_header_total', { state }), state).toBe(truth.optInHeader[state]);
    for (const [defect, n] of Object.entries(truth.optInDefects)) expect(sum(text, 'zero_plane_opt_in_header_total', { state: 'malformed', defect }), defect).toBe(n);
    expect(sum(text, 'zero_plane_exporter_parse_errors_total')).toBe(0);
    expect(sum(text, 'zero_plane_exporter_file_rotations_total', { kind: 'rename' })).toBe(1);
    // Every label resolved (the mix sends X-Model and X-Cohort): a canary cohort is there to roll back.
    expect(sum(text, 'zero_plane_requests_total', { cohort: 'canary' })).toBeGreaterThan(0);
    expect(sum(text, 'zero_plane_requests_total', { model: 'claude-haiku' })).toBeGreaterThan(0);

    const hitSeconds = loggedHitSeconds('nginx', [...logLines(`${log}.1`), ...logLines(log)]);
    expect(hitSeconds).toHaveLength(truth.hits);
    expectQuantilesNear(
      {
        p50: sum(text, 'zero_plane_window_latency_seconds', { quantile: '0.5' }),
        p99: sum(text, 'zero_plane_window_latency_seconds', { quantile: '0.99' }),
        p999: sum(text, 'zero_plane_window_latency_seconds', { quantile: '0.999' }),
      },
      hitSeconds,
    );
    expect(serve.logs.find((l) => l.msg === 'input format')).toMatchObject({ source: log, preset: 'nginx-json', how: 'detected' });
    expect(serve.logs.filter((l) => l.level === 'warn' && !isOpenWebhookWarning(l))).toEqual([]);
  }, 90_000);
});

/** The sum of every sample of `name` whose labels include `where` (a tiny exposition reader for these checks). */
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
