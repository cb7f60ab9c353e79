// Health probes under a scrape flood (issue 24 item 4): serve with ~27,000 series lines (60,000 log lines,
// as test/live/server/reliability-scrape-flood.test.ts), then 200 sockets each sending 5 scrapes back to back
// (a child process, raw sockets) while /-/healthy is probed over fresh connections every 20 ms. Prints, per
// build and round (builds alternate), the probes' p50 and max over the whole flood and over what follows
// its first 500 ms (the first burst of 200 connections), the connect time of the slowest probe, and from
// inside serve (bench/loop-delay.mjs, preloaded) the event loop's delay, GC pauses and loop utilisation
// during the flood, and serve's peak RSS (VmHWM). --busy N runs N `for(;;){}` processes beside it (a loaded
// machine made on purpose). This build is started with --web.probe-listen-address and probed there (the
// probe worker, src/server/probe-listener.ts); --main-port probes its main port instead, as the other build
// (which has no such flag) always is.
// Usage: npm run build && node bench/scrape-flood-probes.mjs [--rounds 3] [--busy 2] [--compare OTHER_CHECKOUT] [--main-port]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '3' }, busy: { type: 'string', default: '0' }, compare: { type: 'string' }, 'main-port': { type: 'boolean', default: false } },
});
const here = fileURLToPath(new URL('..', import.meta.url));
const builds = [...(values.compare === undefined ? [] : [values.compare]), here];
const dir = mkdtempSync(join(tmpdir(), 'zp-bench-flood-'));
const log = join(dir, 'gateway.log');
const lines = [];
for (let i = 0; i < 60_000; i++)
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
writeFileSync(log, `${lines.join('\n')}\n`);

const FLOOD = `
const net = require('node:net');
const port = Number(process.argv[1]);
let left = 200;
for (let i = 0; i < 200; i++) {
  const s = net.connect(port, '127.0.0.1');
  let head = '', want = -1, got = 0, rounds = 5;
  const send = () => s.write('GET /metrics HTTP/1.1\\r\\nHost: x\\r\\n' + (i % 2 ? 'Accept: application/openmetrics-text;version=1.0.0\\r\\n' : '') + '\\r\\n');
  const done = () => { if (--rounds > 0) { head = ''; want = -1; got = 0; send(); return; } s.destroy(); if (--left === 0) process.exit(0); };
  s.on('connect', send);
  s.on('data', (d) => {
    if (want < 0) { head += d.toString('latin1'); const k = head.indexOf('\\r\\n\\r\\n'); if (k < 0) return; want = Number(/content-length: (\\d+)/i.exec(head.slice(0, k))[1]); got = head.length - k - 4; }
    else got += d.length;
    if (got >= want) done();
  });
  s.on('error', () => { rounds = 0; done(); });
}
`;

let probeId = 0;
function probe(port) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const id = probeId++;
    const sentAt = performance.timeOrigin + t0;
    let connected = 0;
    const s = connect(port, '127.0.0.1', () => {
      connected = performance.now() - t0;
      s.write(`GET /-/healthy HTTP/1.1\r\nHost: x\r\nX-Probe: ${id}\r\nConnection: close\r\n\r\n`);
    });
    let head = '';
    s.on('data', (d) => {
      head += d.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      s.destroy();
      resolve({ at: t0, ms: performance.now() - t0, connected, id, sentAt });
    });
    s.on('error', () => resolve({ at: t0, ms: Number.NaN, connected }));
  });
}

const loopOut = join(dir, 'loop.json');
const preload = fileURLToPath(new URL('loop-delay.mjs', import.meta.url));

async function run(root) {
  const viaProbeListener = root === here && !values['main-port'];
  const serve = spawn(
    process.execPath,
    [
      '--import',
      preload,
      join(root, 'bin/zero-plane-exporter.js'),
      'serve',
      '--web.listen-address=127.0.0.1:0',
      ...(viaProbeListener ? ['--web.probe-listen-address=127.0.0.1:0'] : []),
      '--tail.start-at=start',
      '--web.max-requests=40',
      '--log.level=info',
      log,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ZP_BENCH_LOOP_OUT: loopOut } },
  );
  const serving = await new Promise((resolve, reject) => {
    let buf = '';
    serve.stderr.on('data', (c) => {
      buf += c.toString();
      const line = buf.split('\n').find((l) => l.includes('"msg":"serving"'));
      if (line !== undefined && line.endsWith('}')) resolve(JSON.parse(line));
    });
    serve.once('exit', () => reject(new Error(`serve exited: ${buf}`)));
  });
  const url = `http://${serving.address}`;
  for (;;) {
    const t = await (await fetch(`${url}/metrics`)).text();
    const m = /zero_plane_exporter_lines_total\{[^}]*\} (\d+)/.exec(t);
    if (m && Number(m[1]) >= 60_000) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  await new Promise((r) => setTimeout(r, 500));
  const port = Number(new URL(url).port);
  const probePort = viaProbeListener ? Number(new URL(`http://${serving.probeAddress}`).port) : port;
  serve.kill('SIGUSR2');
  await new Promise((r) => setTimeout(r, 50));
  const flood = spawn(process.execPath, ['-e', FLOOD, String(port)], { stdio: 'ignore' });
  let going = true;
  flood.once('exit', () => (going = false));
  const probes = [];
  while (going) {
    probes.push(await probe(probePort));
    await new Promise((r) => setTimeout(r, 20));
  }
  // Peak resident memory over serve's life (the flood's peak: reading the log needs less).
  const peakRssMiB = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${serve.pid}/status`, 'utf8'))[1]) / 1024;
  serve.kill();
  await new Promise((r) => serve.once('exit', r));
  const loop = JSON.parse(readFileSync(loopOut, 'utf8'));
  const t1 = probes[0].at;
  const stats = (ps) => {
    const ms = ps.map((p) => p.ms).sort((a, b) => a - b);
    return { n: ms.length, p50: ms[Math.floor(ms.length / 2)], p99: ms[Math.min(ms.length - 1, Math.floor(ms.length * 0.99))], max: ms.at(-1) };
  };
  const slowest = probes.reduce((a, b) => (b.ms > a.ms ? b : a));
  const seen = loop.probes[slowest.id];
  // Where the slowest probe waited: from its send to serve's accept, from accept to its request read, and after.
  if (process.env.ZP_BENCH_DEBUG) {
    const t = loop.accepts[0];
    console.error('accepts (ms after first):', loop.accepts.map((a) => a - t).join(' '));
    for (const p of [...probes].sort((a, b) => b.ms - a.ms).slice(0, 4)) {
      const q = loop.probes[p.id];
      console.error(`probe ${p.id} sent +${Math.round(p.sentAt - t)} ms: ${Math.round(p.ms)} ms, accept +${Math.round(q.acceptedAt - p.sentAt)}, request +${Math.round(q.requestAt - q.acceptedAt)}`);
    }
  }
  slowest.split =
    seen === undefined ? 'unseen' : `${Math.round(seen.acceptedAt - slowest.sentAt)}/${Math.round(seen.requestAt - seen.acceptedAt)}/${Math.round(slowest.sentAt + slowest.ms - seen.requestAt)}`;
  return {
    peakRssMiB,
    probed: viaProbeListener ? 'probe listener' : 'main port',
    all: stats(probes),
    after: stats(probes.filter((p) => p.at > t1 + 500)),
    slowest: { atMs: slowest.at - t1, ms: slowest.ms, connectMs: slowest.connected, split: slowest.split },
    loop,
  };
}

const busy = Array.from({ length: Number(values.busy) }, () => spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
if (busy.length > 0) console.log(`busy loops: pids ${busy.map((p) => p.pid).join(', ')}`);
console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
console.log(
  '| build | probed on | round | probes | p50 | p99 | max | after the first 500 ms: p50 | max | slowest probe: sent at, connect, wait to accept/to request/after | serve: loop delay p99, max | GC total, max pause | loop busy | peak RSS |',
);
console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
try {
  for (let r = 0; r < Number(values.rounds); r++) {
    for (const b of builds) {
      const x = await run(b);
      const f = (v) => `${Math.round(v)} ms`;
      console.log(
        `| ${b === here ? 'this' : b} | ${x.probed} | ${r + 1} | ${x.all.n} | ${f(x.all.p50)} | ${f(x.all.p99)} | ${f(x.all.max)} | ${f(x.after.p50)} | ${f(x.after.max)} | +${f(x.slowest.atMs)}, ${f(x.slowest.connectMs)}, ${x.slowest.split} ms | ${f(x.loop.loopDelay.p99)}, ${f(x.loop.loopDelay.max)} | ${f(x.loop.gc.totalMs)}, ${f(x.loop.gc.maxMs)} | ${Math.round(x.loop.elu * 100)} % | ${Math.round(x.peakRssMiB)} MiB |`,
      );
    }
  }
} finally {
  for (const p of busy) p.kill();
  rmSync(dir, { recursive: true, force: true });
}
