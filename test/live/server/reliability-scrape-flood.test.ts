// Issue 24, "scrape floods": 200 concurrent unauthenticated scrapes pushed RSS to 313–522 MB against the
// shipped 256 Mi limit, and /-/healthy timed out for 10–20 s. Against a real serve with ~27,000 lines per
// scrape (3.2 MB), 200 scrapes sent at once by a child process (raw sockets, so the flood's own parsing
// does not slow the measured side): past --web.max-requests (40) they get 503 at once, those answered
// share renders (zero_plane_exporter_scrapes_total), every one is answered, RSS stays under 300 MiB (the shipped
// limit is 384 Mi; idle this serve is ~130 MiB, under the flood 175–256 MiB were measured), and
// /-/healthy and /-/ready, probed from a process of their own, are answered ahead of the scrapes. The probe
// listener (--web.probe-listen-address: a worker thread, src/server/probe-listener.ts), probed at the same time
// by a second process, answers every probe 200 and 99 % of them within PROBE_LISTENER_P99_MS.
// The timeouts are generous: at load 20 on two cores one run of the flood took 50 s.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sample, startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const dir = tempDir('zp-scrape-flood-');
const log = join(dir, 'gateway.log');

/**
 * 200 sockets, each sending ROUNDS scrapes one after another (keep-alive) and reading each answer whole;
 * prints the statuses and, for the 200s, each scrape's milliseconds from request to the last byte.
 */
const ROUNDS = 5;
const FLOOD = `
const net = require('node:net');
const port = Number(process.argv[1]);
const counts = {};
const scrapeMs = [];
let left = 200;
for (let i = 0; i < 200; i++) {
  const s = net.connect(port, '127.0.0.1');
  let head = '', want = -1, got = 0, rounds = ${ROUNDS}, t0 = 0;
  const send = () => { t0 = performance.now(); s.write('GET /metrics HTTP/1.1\\r\\nHost: x\\r\\n' + (i % 2 ? 'Accept: application/openmetrics-text;version=1.0.0\\r\\n' : '') + '\\r\\n'); };
  const done = (status) => {
    counts[status] = (counts[status] || 0) + 1;
    if (status === '200') scrapeMs.push(performance.now() - t0);
    if (--rounds > 0 && /^\\d+$/.test(status)) { head = ''; want = -1; got = 0; send(); return; }
    s.destroy(); if (--left === 0) { console.log(JSON.stringify({ counts, scrapeMs })); }
  };
  s.on('connect', send);
  s.on('data', (d) => {
    if (want < 0) { head += d.toString('latin1'); const k = head.indexOf('\\r\\n\\r\\n'); if (k < 0) return; want = Number(/content-length: (\\d+)/i.exec(head.slice(0, k))[1]); got = head.length - k - 4; }
    else got += d.length;
    if (got >= want) done(head.slice(9, 12));
  });
  s.on('error', (e) => done(e.code));
}
`;

/**
 * The kubelet's side, in a process of its own (in the test's process it would wait for the test's own
 * work, and the flood's): /-/healthy and /-/ready in turn over a fresh connection every 20 ms, each timed
 * from connect() to the whole answer head, until its stdin ends; then prints the times and statuses.
 */
const PROBER = `
const net = require('node:net');
const port = Number(process.argv[1]);
const ms = [], statuses = {};
let going = true;
process.stdin.on('data', () => {}).on('end', () => (going = false));
const probe = (path) => new Promise((resolve) => {
  const t0 = performance.now();
  const s = net.connect(port, '127.0.0.1', () => s.write('GET ' + path + ' HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n'));
  let head = '';
  s.on('data', (d) => { head += d.toString('latin1'); if (!head.includes('\\r\\n\\r\\n')) return; s.destroy(); resolve([performance.now() - t0, head.slice(9, 12)]); });
  s.on('error', (e) => resolve([performance.now() - t0, e.code]));
});
(async () => {
  for (let i = 0; going; i++) {
    const [t, status] = await probe(i % 2 ? '/-/ready' : '/-/healthy');
    ms.push(t); statuses[status] = (statuses[status] || 0) + 1;
    await new Promise((r) => setTimeout(r, 20));
  }
  console.log(JSON.stringify({ ms, statuses }));
})();
`;

/** A child's stdout, whole, once it exits. */
function outputOf(child: ChildProcess): Promise<string> {
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  return new Promise((resolve) => child.once('exit', () => resolve(out)));
}

function quantile(values: number[], q: number): number {
  const v = [...values].sort((a, b) => a - b);
  return v[Math.min(v.length - 1, Math.floor(q * v.length))] ?? Number.NaN;
}

/**
 * The probe listener's p99 bound under the flood, for a two-core machine at load 10-20. Measured on 2026-12-03
 * with this test (probers detached, as below): at load 13-20 with 2 and with 4 busy loops beside it, the probe
 * listener's p99 was 90, 185 and 161 ms while the main port's was 438, 642 and 762 ms (max 0.7-3.5 s); with
 * the probers in the test's own session, 119-633 ms against 150 ms-2.2 s. bench/scrape-flood-probes.mjs
 * (bench/RESULTS.md) gave 27-339 ms against 133 ms-3.8 s at load 9-13. The machine's floor at load ~10, serve
 * idle: p99 75-116 ms on either port. 500 ms leaves the listener 2.7x its worst p99 with detached probers,
 * and the old path missed it in most loaded runs.
 */
const PROBE_LISTENER_P99_MS = 500;

function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
}

describe('200 concurrent scrapes', () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    const lines: string[] = [];
    for (let i = 0; i < 60_000; i++) {
      lines.push(
        JSON.stringify({
          latency_ms: 150 + (i % 90),
          status: 200,
          model: `model-${i % 50}`,
          route: `/v1/route-${Math.floor(i / 50) % 20}`,
          cohort: ['stable', 'canary', 'beta'][Math.floor(i / 1000) % 3],
          response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1' },
        }),
      );
    }
    writeFileSync(log, `${lines.join('\n')}\n`);
    serve = await startServe(['--tail.start-at=start', '--web.max-requests=40', '--web.probe-listen-address=127.0.0.1:0', log], 60_000);
    await waitFor(
      async () => ((sample(await (await fetch(`${serve.url}/metrics`)).text(), 'zero_plane_exporter_lines_total{source="' + log + '"}') ?? 0) >= 60_000 ? true : undefined),
      60_000,
      'the log read',
    );
  }, 160_000);
  afterAll(async () => {
    expect(await serve.stop()).toBe(0);
  });

  it('probes answered during the flood ahead of every scrape, on the probe listener within a bound, 503 past --web.max-requests, renders shared, all answered, RSS bounded', async () => {
    const pid = serve.child.pid as number;
    const port = String(new URL(serve.url).port);
    const serving = serve.logs.find((l) => l.msg === 'serving') as { probeAddress: string };
    const probePort = /:(\d+)$/.exec(serving.probeAddress)?.[1] as string;
    // Each prober in a session of its own (detached: setsid), as the kubelet is in a cgroup of its own: with
    // the kernel's autogroups a session shares the CPU as one, so a prober in the test's session waited for
    // the CPU behind the flood client, serve and whatever else the session runs. Both ports alike. It still
    // ends with this process: it stops when its stdin closes.
    const prober = spawn(process.execPath, ['-e', PROBER, port], { stdio: ['pipe', 'pipe', 'inherit'], detached: true });
    const probed = outputOf(prober);
    const listenerProber = spawn(process.execPath, ['-e', PROBER, probePort], { stdio: ['pipe', 'pipe', 'inherit'], detached: true });
    const listenerProbed = outputOf(listenerProber);
    const rssBefore = rssMiB(pid);
    let maxRss = rssBefore;
    const sampler = setInterval(() => (maxRss = Math.max(maxRss, rssMiB(pid))), 20);
    let flooded: string;
    try {
      flooded = await outputOf(spawn(process.execPath, ['-e', FLOOD, port], { stdio: ['ignore', 'pipe', 'inherit'] }));
    } finally {
      clearInterval(sampler);
      prober.stdin?.end();
      listenerProber.stdin?.end();
    }
    const { ms, statuses } = JSON.parse(await probed) as { ms: number[]; statuses: Record<string, number> };
    const listener = JSON.parse(await listenerProbed) as { ms: number[]; statuses: Record<string, number> };
    const { counts, scrapeMs } = JSON.parse(flooded) as { counts: Record<string, number>; scrapeMs: number[] };
    const listenerFigures = { probes: listener.ms.length, p50: quantile(listener.ms, 0.5), p99: quantile(listener.ms, 0.99), max: Math.max(...listener.ms) };
    const figures = {
      probes: ms.length,
      p50: quantile(ms, 0.5),
      p99: quantile(ms, 0.99),
      max: Math.max(...ms),
      scrapeP50: quantile(scrapeMs, 0.5),
      rssBefore,
      maxRss,
      counts,
      listener: listenerFigures,
    };
    console.log(`scrape flood: ${JSON.stringify(figures)}`);
    expect(Object.keys(statuses), JSON.stringify(figures)).toEqual(['200']);
    expect(ms.length, JSON.stringify(figures)).toBeGreaterThanOrEqual(5);
    // A probe waits for no render and no body: connections are accepted, and probes answered, before the
    // flood's bulk work (accept-first.ts; libuv accepts one connection per turn of the loop). So 99 % of the
    // probes are answered sooner than half of the scrapes, each of which waits for a render and its body.
    // Before, a probe connected behind the flood's 200 connections waited 0.5-7 s to be accepted, longer
    // than most scrapes. The absolute p99 < 100 ms holds on an idle or moderately loaded machine
    // (bench/scrape-flood-probes.mjs) but not at load 15 on two cores, where serve's own GC pauses stretch
    // past 150 ms of wall time: it is not asserted here; bench/RESULTS.md has the figures.
    expect(figures.p99, JSON.stringify(figures)).toBeLessThan(figures.scrapeP50);
    // The probe listener: a thread of its own, behind none of the flood's accepts, renders, writes or GC.
    expect(Object.keys(listener.statuses), JSON.stringify(figures)).toEqual(['200']);
    expect(listener.ms.length, JSON.stringify(figures)).toBeGreaterThanOrEqual(5);
    expect(listenerFigures.p99, JSON.stringify(figures)).toBeLessThan(PROBE_LISTENER_P99_MS);
    expect((counts['200'] ?? 0) + (counts['503'] ?? 0), flooded).toBe(200 * ROUNDS);
    // Whether 40 are ever in flight at once depends on how fast the flood's sockets are accepted (a run of
    // 200 × 200 was seen): that the limit answers 503 is shown below with a limit the flood must pass.
    const text = await (await fetch(`${serve.url}/metrics`)).text();
    const rendered = sample(text, 'zero_plane_exporter_scrapes_total{result="rendered"}') ?? 0;
    const shared = sample(text, 'zero_plane_exporter_scrapes_total{result="shared"}') ?? 0;
    expect(sample(text, 'zero_plane_exporter_scrapes_total{result="refused"}')).toBe(counts['503'] ?? 0);
    expect(rendered + shared).toBeGreaterThanOrEqual(counts['200'] ?? 0);
    expect(shared).toBeGreaterThan(0);
    // Under the shipped 384 Mi limit with room, and below what the flood took it to before the fix (313-522
    // MB). An idle serve is ~130 MiB here (rssBefore); the flood's own cost spreads: 208-256 MiB at the peak
    // over runs of one build, the same before and after 2026-12-04's changes, so 240 sat inside the spread.
    expect(maxRss, JSON.stringify(figures)).toBeLessThan(300);
  }, 180_000);

  it('past a limit of 2 in flight, the rest of the flood gets 503 at once, each counted as refused', async () => {
    const tight = await startServe(['--tail.start-at=start', '--web.max-requests=2', log], 60_000);
    try {
      await waitFor(
        async () => ((sample(await (await fetch(`${tight.url}/metrics`)).text(), 'zero_plane_exporter_lines_total{source="' + log + '"}') ?? 0) >= 60_000 ? true : undefined),
        60_000,
        'the log read',
      );
      const out = await outputOf(spawn(process.execPath, ['-e', FLOOD, new URL(tight.url).port], { stdio: ['ignore', 'pipe', 'inherit'] }));
      const { counts } = JSON.parse(out) as { counts: Record<string, number> };
      expect((counts['200'] ?? 0) + (counts['503'] ?? 0), out).toBe(200 * ROUNDS);
      expect(counts['503'] ?? 0, out).toBeGreaterThan(0);
      const text = await (await fetch(`${tight.url}/metrics`)).text();
      expect(sample(text, 'zero_plane_exporter_scrapes_total{result="refused"}')).toBe(counts['503']);
    } finally {
      expect(await tight.stop()).toBe(0);
    }
  }, 160_000);
});
