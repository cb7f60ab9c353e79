// Real logs start with health probes: Debian's nginx, Caddy and HAProxy in front of the simulator (each
// configured as docs/gateways.md shows), kube-probe's GET of the health path first (no Zero-Plane header either
// way), then the known mix. `report` with no config must be exact, probes included, and Caddy's log must
// never be read as Envoy's (both have `duration`). `serve` follows nginx through mv + reopen and HAProxy
// (standard output appended to the file) and Caddy through mv + restart, with probes at the start of each
// generation.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, renameSync } from 'node:fs';
import http from 'node:http';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { HEALTH_PATH } from '../../../src/simulate/protocol.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulate/simulator.js';
import { BIN, startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { knownMix, sendMix, truthOf, type MixResponse, type Truth } from '../../helpers/gateway-mix.js';
import { startCaddy, startHaproxy, startNginx, type Gateway } from '../../helpers/gateways.js';
import { tempDir } from '../../helpers/temp-dir.js';

type Json = Record<string, unknown>;
const PRESET: Record<Gateway['name'], string> = { nginx: 'nginx-json', caddy: 'caddy-json', haproxy: 'haproxy-json' };
/** More than the detector holds (64): Caddy's probes reach the bound before the first request. */
const PROBES = 70;

/** kube-probe's GETs of the health path, in order; their status codes. */
async function sendProbes(baseUrl: string, n: number): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const codes: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      codes.push(
        await new Promise<number>((resolve, reject) => {
          const req = http.request(new URL(HEALTH_PATH, baseUrl), { method: 'GET', agent, headers: { 'user-agent': 'kube-probe/1.29' }, timeout: 10_000 }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          });
          req.on('timeout', () => req.destroy(new Error('probe timed out')));
          req.on('error', reject);
          req.end();
        }),
      );
    }
  } finally {
    agent.destroy();
  }
  return codes;
}

/** The truth of the mix with probes added: non-hits, their status, and no opt-in header (`missing`). */
function withProbes(t: Truth, probeCodes: readonly number[]): Truth {
  const statusClasses = { ...t.statusClasses };
  const codes = new Map(t.topStatusCodes.map((c) => [c.code, c.count]));
  for (const code of probeCodes) {
    const cls = `${Math.floor(code / 100)}xx`;
    statusClasses[cls] = (statusClasses[cls] ?? 0) + 1;
    codes.set(code, (codes.get(code) ?? 0) + 1);
  }
  return {
    ...t,
    requests: t.requests + probeCodes.length,
    optInHeader: { ...t.optInHeader, missing: t.optInHeader.missing + probeCodes.length },
    statusClasses: Object.fromEntries(Object.entries(statusClasses).sort(([a], [b]) => a.localeCompare(b))),
    topStatusCodes: [...codes].map(([code, count]) => ({ code, count })).sort((a, b) => b.count - a.count || a.code - b.code),
  };
}

function logLines(path: string): string[] {
  return existsSync(path)
    ? readFileSync(path, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
    : [];
}

async function waitForLines(paths: string[], n: number): Promise<void> {
  await waitFor(() => (paths.reduce((sum, p) => sum + logLines(p).length, 0) >= n ? true : undefined), 20_000, `${n} log lines in ${paths.join(', ')}`);
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
] as const)('%s: health probes first, then the known mix', (name, start) => {
  let sim: RunningSimulator | undefined;
  let gateway: Gateway | undefined;

  afterAll(async () => {
    await gateway?.stop();
    await sim?.close();
  });

  it('report with no config detects the format and is exact, the probes counted as what they are', async () => {
    sim = await startSimulator({ mode: 'strict', seed: 21 });
    const g = (gateway = await start(tempDir(`zp-probes-${name}-`), new URL(sim.url).host));
    const simulator = sim;
    const probeCodes = await sendProbes(g.url, PROBES);
    expect(new Set(probeCodes)).toEqual(new Set([200]));
    const requests = knownMix();
    const responses: MixResponse[] = await sendMix(g.url, requests, (f) => simulator.faults.set(f));
    await waitForLines([g.logPath], PROBES + requests.length);
    const truth = withProbes(truthOf(requests, responses), probeCodes);

    const { report, stderr, code } = await reportJson(g.logPath);
    expect(code, stderr).toBe(0);
    expect(report.input).toEqual({ [g.logPath]: PRESET[name] });
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
      optInHeader: truth.optInHeader,
      statusClasses: truth.statusClasses,
      topStatusCodes: truth.topStatusCodes,
    });
    if (name === 'caddy') {
      // Caddy logs no field of a header that was not sent: 64 probes held, then decided by Caddy's own
      // structure (logger, msg, resp_headers), and said so.
      expect(stderr).toContain(`${g.logPath}: read as caddy-json by its structure alone`);
    } else {
      // nginx and HAProxy log every header field, empty or "-": the first probe is evidence.
      expect(stderr).toBe('');
    }
  }, 120_000);
});

describe("serve through a rotation of the gateway's own kind, probes at the start of each generation", () => {
  const running: { stop(): Promise<unknown> }[] = [];
  afterAll(async () => {
    for (const r of running.reverse()) await r.stop();
  });

  // HAProxy writes its log to standard output, which it cannot reopen: its rotation is a rename and a
  // restart onto a new file (systemd StandardOutput=append: after logrotate). copytruncate under it leaves
  // a run of NUL bytes (its standard output is not opened O_APPEND), which is issue 23's item 6.
  // Caddy rolls its log itself by renaming it at 100 MiB; here it is renamed and Caddy restarted onto a
  // new file, which its probe lines (no header field at all) start with. copytruncate under Caddy leaves
  // NUL bytes (it does not write O_APPEND): issue 23's item 6.
  it.each([
    ['nginx', 'rename'],
    ['haproxy', 'rename-restart'],
    ['caddy', 'rename-restart'],
  ] as const)(
    '%s (%s) is exact, with no config',
    async (name, kind) => {
      const dir = tempDir(`zp-probes-serve-${name}-`);
      const sim = await startSimulator({ mode: 'strict', seed: 22 });
      running.push({ stop: () => sim.close() });
      const startOther = name === 'caddy' ? startCaddy : startHaproxy;
      let gw = name === 'nginx' ? await startNginx(dir, new URL(sim.url).host) : await startOther(dir, new URL(sim.url).host);
      const current = { stop: () => gw.stop() };
      running.push(current);
      const log = gw.logPath;
      const serve: ServeProcess = await startServe([log]);
      running.push(serve);
      const requests = knownMix();
      const half = Math.floor(requests.length / 2);
      const probes1 = await sendProbes(gw.url, 10);
      // A quiet log after the probes (serve decides held lines after 2 s): for Caddy, by its structure alone.
      await new Promise((r) => setTimeout(r, 3_000));
      const first = await sendMix(gw.url, requests.slice(0, half), (f) => sim.faults.set(f));
      await waitForLines([log], 10 + half);
      // Every line of the first generation read before the rotation (copytruncate keeps no copy for serve to find otherwise).
      await waitFor(async () => ((await linesTotal(serve.url)) === 10 + half ? true : undefined), 20_000, 'the first generation read');
      if (kind === 'rename') {
        renameSync(log, `${log}.1`);
        (gw as Awaited<ReturnType<typeof startNginx>>).reopen();
      } else {
        await gw.stop();
        renameSync(log, `${log}.1`);
        gw = await startOther(dir, new URL(sim.url).host);
      }
      const probes2 = await sendProbes(gw.url, 10);
      const second = await sendMix(gw.url, requests.slice(half), (f) => sim.faults.set(f));
      const total = 20 + requests.length;
      const truth = withProbes(truthOf(requests, [...first, ...second]), [...probes1, ...probes2]);
      const text = await waitFor(
        async () => {
          const t = await (await fetch(`${serve.url}/metrics`)).text();
          return sum(t, 'zero_plane_exporter_lines_total') === total ? t : undefined;
        },
        20_000,
        'every line in /metrics',
      );
      expect(sum(text, 'zero_plane_exporter_input_info', { source: log, preset: PRESET[name] })).toBe(1);
      expect(
        sum(text, 'zero_plane_exporter_parse_errors_total'),
        text
          .split('\n')
          .filter((l) => l.startsWith('zero_plane_exporter_'))
          .join('\n'),
      ).toBe(0);
      expect(sum(text, 'zero_plane_requests_total')).toBe(truth.requests);
      expect(sum(text, 'zero_plane_requests_total', { hit: 'true' })).toBe(truth.hits);
      for (const [cls, n] of Object.entries(truth.statusClasses)) expect(sum(text, 'zero_plane_requests_total', { status_class: cls }), cls).toBe(n);
      expect(sum(text, 'zero_plane_degraded_requests_total')).toBe(truth.degradedCount);
      for (const state of ['valid', 'missing', 'malformed'] as const) expect(sum(text, 'zero_plane_opt_in_header_total', { state }), state).toBe(truth.optInHeader[state]);
      expect(sum(text, 'zero_plane_exporter_parse_errors_total')).toBe(0);
      expect(sum(text, 'zero_plane_exporter_file_rotations_total')).toBeGreaterThanOrEqual(1);
    },
    120_000,
  );
});

async function linesTotal(url: string): Promise<number> {
  return sum(await (await fetch(`${url}/metrics`)).text(), 'zero_plane_exporter_lines_total');
}

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
