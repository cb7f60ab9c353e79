// Issue 24, "scrape floods": 200 concurrent unauthenticated scrapes pushed RSS to 313–522 MB against the
// shipped 256 Mi limit, and /-/healthy timed out for 10–20 s. Against a real serve with ~27,000 lines per
// scrape (3.2 MB), 200 scrapes sent at once by a child process (raw sockets, so the flood's own parsing
// does not slow the measured side): past --web.max-requests (40) they get 503 at once, those answered
// share renders (zero_plane_exporter_scrapes_total), every one is answered, and RSS stays under 240 MiB
// (the shipped limit is 256 Mi; idle this serve is ~130 MiB, under the flood 190–232 MiB were measured).
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sample, startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const dir = tempDir('zp-scrape-flood-');
const log = join(dir, 'gateway.log');

/** 200 sockets, each sending one scrape at once and reading the answer whole; prints the statuses. */
const FLOOD = `
const net = require('node:net');
const port = Number(process.argv[1]);
const counts = {};
let left = 200;
for (let i = 0; i < 200; i++) {
  const s = net.connect(port, '127.0.0.1');
  let head = '', want = -1, got = 0;
  const done = (status) => { counts[status] = (counts[status] || 0) + 1; s.destroy(); if (--left === 0) { console.log(JSON.stringify(counts)); } };
  s.on('connect', () => s.write('GET /metrics HTTP/1.1\\r\\nHost: x\\r\\n' + (i % 2 ? 'Accept: application/openmetrics-text;version=1.0.0\\r\\n' : '') + '\\r\\n'));
  s.on('data', (d) => {
    if (want < 0) { head += d.toString('latin1'); const k = head.indexOf('\\r\\n\\r\\n'); if (k < 0) return; want = Number(/content-length: (\\d+)/i.exec(head.slice(0, k))[1]); got = head.length - k - 4; }
    else got += d.length;
    if (got >= want) done(head.slice(9, 12));
  });
  s.on('error', (e) => done(e.code));
}
`;

function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
}

describe('200 concurrent scrapes', () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    const lines: string[] = [];
    for (let i = 0; i < 60_000; i++) {
      lines.push(JSON.stringify({ latency_ms: 150 + (i % 90), status: 200, model: `model-${i % 50}`, route: `/v1/route-${Math.floor(i / 50) % 20}`, cohort: ['stable', 'canary', 'beta'][Math.floor(i / 1000) % 3], response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1' } }));
    }
    writeFileSync(log, `${lines.join('\n')}\n`);
    serve = await startServe(['--tail.start-at=start', '--web.max-requests=40', log], 20_000);
    await waitFor(async () => ((sample(await (await fetch(`${serve.url}/metrics`)).text(), 'zero_plane_exporter_lines_total{source="' + log + '"}') ?? 0) >= 60_000 ? true : undefined), 20_000, 'the log read');
  }, 60_000);
  afterAll(async () => {
    expect(await serve.stop()).toBe(0);
  });

  it('503 past --web.max-requests, renders shared, all answered, RSS under 240 MiB of the 256 Mi limit', async () => {
    const pid = serve.child.pid as number;
    const flood = spawn(process.execPath, ['-e', FLOOD, new URL(serve.url).port], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    flood.stdout.on('data', (c: Buffer) => (out += c.toString()));
    let maxRss = rssMiB(pid);
    const sampler = setInterval(() => (maxRss = Math.max(maxRss, rssMiB(pid))), 20);
    await new Promise((resolve) => flood.once('exit', resolve));
    clearInterval(sampler);
    const counts = JSON.parse(out) as Record<string, number>;
    expect((counts['200'] ?? 0) + (counts['503'] ?? 0), out).toBe(200);
    // Whether 40 are ever in flight at once depends on how fast the flood's sockets are accepted (a run of
    // 200 × 200 was seen): that the limit answers 503 is shown below with a limit the flood must pass.
    const text = await (await fetch(`${serve.url}/metrics`)).text();
    const rendered = sample(text, 'zero_plane_exporter_scrapes_total{result="rendered"}') ?? 0;
    const shared = sample(text, 'zero_plane_exporter_scrapes_total{result="shared"}') ?? 0;
    expect(sample(text, 'zero_plane_exporter_scrapes_total{result="refused"}')).toBe(counts['503']);
    expect(rendered + shared).toBeGreaterThanOrEqual(counts['200'] ?? 0);
    expect(shared).toBeGreaterThan(0);
    expect(maxRss).toBeLessThan(240);
  }, 60_000);

  it('past a limit of 2 in flight, the rest of the flood gets 503 at once, each counted as refused', async () => {
    const tight = await startServe(['--tail.start-at=start', '--web.max-requests=2', log], 20_000);
    try {
      await waitFor(async () => ((sample(await (await fetch(`${tight.url}/metrics`)).text(), 'zero_plane_exporter_lines_total{source="' + log + '"}') ?? 0) >= 60_000 ? true : undefined), 20_000, 'the log read');
      const flood = spawn(process.execPath, ['-e', FLOOD, new URL(tight.url).port], { stdio: ['ignore', 'pipe', 'inherit'] });
      let out = '';
      flood.stdout.on('data', (c: Buffer) => (out += c.toString()));
      await new Promise((resolve) => flood.once('exit', resolve));
      const counts = JSON.parse(out) as Record<string, number>;
      expect((counts['200'] ?? 0) + (counts['503'] ?? 0), out).toBe(200);
      expect(counts['503'] ?? 0, out).toBeGreaterThan(0);
      const text = await (await fetch(`${tight.url}/metrics`)).text();
      expect(sample(text, 'zero_plane_exporter_scrapes_total{result="refused"}')).toBe(counts['503']);
    } finally {
      expect(await tight.stop()).toBe(0);
    }
  }, 60_000);
});
