// gzip on /metrics and the other text endpoints (issue 27 item 7, issue 31 item 4): Prometheus asks for it
// on every scrape. A real Prometheus scrapes serve through a loopback TCP relay that only copies bytes and
// keeps the first packet each way, so the test sees what Prometheus asked for and what it was answered, and
// Prometheus must still read the series. curl (--compressed) and Node's client check the rest.
import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBinary } from '../../helpers/binaries.js';
import { startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { PROMETHEUS_ACCEPT } from '../../helpers/openmetrics.js';
import { startPrometheus, type Daemon } from '../../helpers/processes.js';
import { tempDir } from '../../helpers/temp-dir.js';

const dir = tempDir('zp-gzip-');
let serve: ServeProcess;
let relay: Server;
const sockets = new Set<Socket>();
const seen: { request: string; response: string }[] = [];
let prometheus: Daemon | undefined;
let promUrl = '';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function get(path: string, headers: Record<string, string>): Promise<Answer> {
  const u = new URL(serve.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, headers, agent: false }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts) }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The series (name and labels) of a text-format body, without values or comments. */
const seriesOf = (text: string) =>
  new Set(
    text
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('#'))
      .map((l) => l.slice(0, l.lastIndexOf(' '))),
  );

beforeAll(async () => {
  serve = await startServe([]);
  const target = new URL(serve.url);
  relay = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    const entry = { request: '', response: '' };
    seen.push(entry);
    client.once('data', (c: Buffer) => (entry.request = c.toString('latin1')));
    upstream.once('data', (c: Buffer) => (entry.response = c.toString('latin1')));
    client.pipe(upstream).pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const port = (relay.address() as { port: number }).port;
  const started = await startPrometheus(requireBinary('prometheus'), { dir, rules: 'groups: []\n', scrapeTarget: `127.0.0.1:${port}` });
  promUrl = started.url;
  prometheus = started.daemon;
}, 60_000);

afterAll(async () => {
  await prometheus?.stop();
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => relay?.close(resolve));
  expect(await serve.stop()).toBe(0);
});

describe('gzip on /metrics', () => {
  it('a real Prometheus asks for gzip, is answered gzip, and reads the series', async () => {
    const query = async (expr: string) => {
      const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`, { signal: AbortSignal.timeout(5_000) });
      return ((await res.json()) as { data: { result: { value: [number, string] }[] } }).data.result;
    };
    const samples = await waitFor(
      async () => {
        const r = await query('scrape_samples_scraped{job="zero-plane-exporter"}');
        return r.length > 0 && Number(r[0]?.value[1]) > 50 ? Number(r[0]?.value[1]) : undefined;
      },
      20_000,
      'Prometheus to scrape serve through the relay',
    );
    expect((await query('up{job="zero-plane-exporter"}'))[0]?.value[1]).toBe('1');
    expect((await query('zero_plane_exporter_build_info{job="zero-plane-exporter"}'))[0]?.value[1]).toBe('1');
    const scrape = seen.find((s) => s.request.startsWith('GET /metrics'));
    expect(scrape?.request).toMatch(/\r\nAccept-Encoding: gzip\r\n/i);
    expect(scrape?.response).toMatch(/^HTTP\/1\.1 200 /);
    expect(scrape?.response).toMatch(/\r\nContent-Encoding: gzip\r\n/i);
    expect(scrape?.response).toMatch(/\r\nVary: Accept, Accept-Encoding\r\n/i);
    // What Prometheus stored is every sample of the body (the count it reports is of the decoded body).
    // Prometheus negotiates OpenMetrics (each _created line a sample of its own in 2.42): the same body, plain.
    const plain = (await get('/metrics', { accept: PROMETHEUS_ACCEPT })).body.toString('utf8');
    expect(Math.abs(samples - seriesOf(plain).size)).toBeLessThanOrEqual(2);
  }, 40_000);

  it('gzip when asked, identity otherwise; the same series either way', async () => {
    const gz = await get('/metrics', { 'accept-encoding': 'gzip' });
    expect(gz.status).toBe(200);
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers.vary).toBe('Accept, Accept-Encoding');
    expect(Number(gz.headers['content-length'])).toBe(gz.body.length);
    const plain = await get('/metrics', {});
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBe('Accept, Accept-Encoding');
    const refused = await get('/metrics', { 'accept-encoding': 'gzip;q=0, identity' });
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect(seriesOf(gunzipSync(gz.body).toString('utf8'))).toEqual(seriesOf(plain.body.toString('utf8')));
    expect(gz.body.length).toBeLessThan(plain.body.length / 2);
    // curl decodes it (a broken gzip stream is curl exit 61).
    const curl = spawnSync(requireBinary('curl'), ['-sS', '--compressed', '-w', '\n%{http_code} %{size_download}', `${serve.url}/metrics`], { encoding: 'utf8', timeout: 20_000 });
    expect(curl.status, curl.stderr).toBe(0);
    const [code, downloaded] = (curl.stdout.split('\n').at(-1) ?? '').split(' ');
    expect(code).toBe('200');
    expect(Number(downloaded)).toBeLessThan(plain.body.length / 2);
    expect(curl.stdout).toContain('zero_plane_exporter_build_info{');
  });

  it('OpenMetrics gzipped too, and 40 concurrent gzip scrapes all decode whole', async () => {
    const om = await get('/metrics', { 'accept-encoding': 'gzip', accept: 'application/openmetrics-text;version=1.0.0' });
    expect(om.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(om.body).toString('utf8').endsWith('# EOF\n')).toBe(true);
    const all = await Promise.all(Array.from({ length: 40 }, () => get('/metrics', { 'accept-encoding': 'gzip' })));
    for (const a of all) {
      expect(a.status).toBe(200);
      expect(gunzipSync(a.body).toString('utf8')).toContain('zero_plane_exporter_build_info{');
    }
  });

  it('the landing page is gzipped when asked; small answers are sent as they are', async () => {
    const page = await get('/', { 'accept-encoding': 'gzip' });
    expect(page.headers['content-encoding']).toBe('gzip');
    expect(page.headers.vary).toContain('Accept-Encoding');
    expect(gunzipSync(page.body).toString('utf8')).toMatch(/^<!doctype html>/i);
    expect((await get('/', {})).headers['content-encoding']).toBeUndefined();
    const healthy = await get('/-/healthy', { 'accept-encoding': 'gzip' });
    expect(healthy.headers['content-encoding']).toBeUndefined();
    expect(healthy.body.toString()).toBe('zero-plane-exporter is Healthy.\n');
  });
});
