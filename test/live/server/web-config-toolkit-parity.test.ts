// Every key of the exporter toolkit's web config does here what it does in Go, on a real `serve`:
// the toolkit's own sample config loads and serves; rate_limit answers 429 past its bucket; TLS version
// limits, cipher_suites and curve_preferences decide which handshakes succeed; http2 offers h2 by ALPN
// (and HTTP/2 requests are served) or not; a repeated --web.listen-address binds each address;
// --log.format=logfmt writes logfmt.
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { connect as http2Connect } from 'node:http2';
import { join } from 'node:path';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import { fileURLToPath } from 'node:url';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { logfmtLine } from '../../../src/server/logger.js';
import { parseWebConfig } from '../../../src/server/web-config.js';
import { makeCertificates } from '../../helpers/certificates.js';
import { runCli, startServe, type ServeProcess } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const SAMPLE = fileURLToPath(new URL('../../fixtures/exporter-toolkit/web-config.yml', import.meta.url));
const dir = tempDir('zp-toolkit-');
const path = (name: string) => join(dir, name);
const running: ServeProcess[] = [];

beforeAll(() => makeCertificates(dir));
afterAll(async () => {
  for (const s of running.splice(0)) expect(await s.stop()).toBe(0);
});

async function serveWith(webConfig: string, extra: string[] = []): Promise<{ serve: ServeProcess; host: string; port: number; url: string }> {
  const file = path(`web-${running.length}.yml`);
  writeFileSync(file, webConfig);
  const serve = await startServe([`--web.config.file=${file}`, ...extra]);
  running.push(serve);
  const address = serve.logs.find((l) => l.msg === 'serving')?.address as string;
  const port = Number(address.slice(address.lastIndexOf(':') + 1));
  return { serve, host: '127.0.0.1', port, url: `https://127.0.0.1:${port}` };
}

const TLS = 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n';

/** A TLS handshake with these client options: the negotiated protocol, cipher and ALPN, or the error. */
function handshake(port: number, opts: ConnectionOptions): Promise<{ protocol: string | null; cipher: string; alpn: string | false | null } | { error: string }> {
  return new Promise((resolve) => {
    const socket = tlsConnect({ host: '127.0.0.1', port, ca: readFileSync(path('server.crt')), ...opts }, () => {
      resolve({ protocol: socket.getProtocol(), cipher: socket.getCipher().name, alpn: socket.alpnProtocol });
      socket.end();
    });
    socket.once('error', (err) => resolve({ error: err.message }));
    socket.setTimeout(5_000, () => socket.destroy(new Error('timed out')));
  });
}

async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  const { request } = await import('node:https');
  return new Promise((resolve, reject) => {
    const req = request(url, { ca: readFileSync(path('server.crt')), headers, agent: false, timeout: 5_000 }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.once('error', reject);
    req.end();
  });
}

describe("the exporter toolkit's documented sample config (docs/web-config.yml)", () => {
  it('loads as is: TLS, bcrypt users alice and bob, and its rate limit of 20 with one more per second', async () => {
    const copy = path('web-config.yml');
    copyFileSync(SAMPLE, copy);
    const parsed = parseWebConfig(readFileSync(copy, 'utf8'), copy);
    expect([...parsed.basicAuthUsers.keys()]).toEqual(['alice', 'bob']);
    expect(parsed.rateLimit).toEqual({ intervalMs: 1000, burst: 20 });
    expect(parsed.http2).toBe(true);
    expect(parsed.tls?.options.minVersion).toBe('TLSv1.2');

    const serve = await startServe([`--web.config.file=${copy}`]);
    running.push(serve);
    const serving = serve.logs.find((l) => l.msg === 'serving');
    expect(serving).toMatchObject({ scheme: 'https', basicAuth: true, http2: true, rateLimit: '20/1000ms' });
    // The sample's passwords are not published: a login with a guess is refused, over TLS.
    const url = `https://${serving?.address as string}/metrics`;
    const r = await get(url, { authorization: `Basic ${Buffer.from('alice:guess').toString('base64')}` });
    expect(r.status).toBe(401);
  });
});

describe('rate_limit', () => {
  it('answers 429 "Too Many Requests" past the burst, before auth and for every path, as Go\'s handler does', async () => {
    // A minute per token: the test's requests cannot earn one back while it runs.
    const hash = bcrypt.hashSync('pw', 4);
    const { url } = await serveWith(`${TLS}basic_auth_users:\n  alice: ${hash}\nrate_limit:\n  interval: 1m\n  burst: 3\n`);
    const auth = { authorization: `Basic ${Buffer.from('alice:pw').toString('base64')}` };
    const statuses: number[] = [];
    for (const p of ['/metrics', '/-/healthy', '/metrics', '/metrics', '/-/ready']) statuses.push((await get(`${url}${p}`, auth)).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const refused = await get(`${url}/metrics`);
    expect(refused).toEqual({ status: 429, body: 'Too Many Requests\n' });
  });

  it('interval 0 is no limit; burst 0 refuses every request (golang.org/x/time/rate); a bad interval exits 2', async () => {
    expect(parseWebConfig('rate_limit:\n  interval: 0\n  burst: 0\n', path('x.yml')).rateLimit).toBeUndefined();
    const { url } = await serveWith('rate_limit:\n  interval: 1s\n  burst: 0\n'.replace(/^/, TLS));
    expect((await get(`${url}/-/healthy`)).status).toBe(429);
    writeFileSync(path('bad-rate.yml'), 'rate_limit:\n  interval: -1s\n');
    const r = runCli(['serve', '--web.listen-address=127.0.0.1:0', `--web.config.file=${path('bad-rate.yml')}`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/bad-rate\.yml:2: rate_limit\.interval: "-1s" is not a Go duration/);
  });
});

describe('TLS versions, cipher suites and curves', () => {
  it('min_version: TLS13 refuses a client offering only TLS 1.2, and serves a TLS 1.3 one', async () => {
    const { port } = await serveWith(`${TLS}  min_version: TLS13\n`);
    expect(await handshake(port, { maxVersion: 'TLSv1.2' })).toHaveProperty('error');
    expect(await handshake(port, {})).toMatchObject({ protocol: 'TLSv1.3' });
  });

  it('max_version: TLS12 keeps a TLS 1.3 client at TLS 1.2', async () => {
    const { port } = await serveWith(`${TLS}  max_version: TLS12\n`);
    expect(await handshake(port, {})).toMatchObject({ protocol: 'TLSv1.2' });
  });

  it('cipher_suites limit TLS 1.2 to the listed suites (TLS 1.3 keeps its own, as in Go)', async () => {
    const { port } = await serveWith(`${TLS}  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384]\n`);
    expect(await handshake(port, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES256-GCM-SHA384' })).toHaveProperty('error');
    expect(await handshake(port, { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256' })).toMatchObject({
      protocol: 'TLSv1.2',
      cipher: 'ECDHE-RSA-AES128-GCM-SHA256',
    });
    expect(await handshake(port, {})).toMatchObject({ protocol: 'TLSv1.3' });
  });

  it('curve_preferences limit the key exchange to the listed curves', async () => {
    const { port } = await serveWith(`${TLS}  curve_preferences: [CurveP384]\n`);
    expect(await handshake(port, { ecdhCurve: 'X25519' })).toHaveProperty('error');
    expect(await handshake(port, { ecdhCurve: 'X25519:P-384' })).toMatchObject({ protocol: 'TLSv1.3' });
  });

  it('what Node cannot do exactly, or what Go refuses, exits 2 naming the key and why', () => {
    const refused = (extra: string) => {
      writeFileSync(path('refused.yml'), `${TLS}${extra}`);
      const r = runCli(['serve', '--web.listen-address=127.0.0.1:0', `--web.config.file=${path('refused.yml')}`]);
      expect(r.code, r.stderr).toBe(2);
      return r.stderr;
    };
    expect(refused('  min_version: TLS10\n')).toMatch(/refused\.yml:4: tls_server_config\.min_version: TLS10 is refused: Node\.js 20's OpenSSL 3 cannot negotiate TLS 1\.0 or 1\.1/);
    expect(refused('  min_version: TLS11\n  max_version: TLS11\n')).toMatch(/tls_server_config\.max_version: TLS11 is refused/);
    // HTTP/2 (on by default) over TLS 1.2 needs an AES-128-GCM suite (RFC 7540 9.2.2), as Go says.
    expect(refused('  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384]\n  max_version: TLS12\n')).toMatch(
      /tls_server_config\.cipher_suites: HTTP\/2 .* needs TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256/,
    );
    expect(refused('  cipher_suites: [TLS_AES_128_GCM_SHA256]\n  max_version: TLS12\n')).toMatch(/lists only TLS 1\.3 suites/);
    expect(refused('  curve_preferences: [CurveP224]\n')).toMatch(/tls_server_config\.curve_preferences\.0: /);
  });
});

describe('http_server_config.http2', () => {
  it('on (the default): h2 by ALPN, and /metrics, the landing page and its script served over HTTP/2 with the configured headers', async () => {
    const { port, url } = await serveWith(`${TLS}http_server_config:\n  headers:\n    X-Content-Type-Options: nosniff\n`);
    expect(await handshake(port, { ALPNProtocols: ['h2', 'http/1.1'] })).toMatchObject({ alpn: 'h2' });
    const session = http2Connect(url, { ca: readFileSync(path('server.crt')) });
    try {
      const fetch2 = (p: string) =>
        new Promise<{ status: number; type: string; nosniff: string; body: string }>((resolve, reject) => {
          const stream = session.request({ ':path': p });
          let body = '';
          let head: Record<string, unknown> = {};
          stream.on('response', (h) => (head = h));
          stream.on('data', (c: Buffer) => (body += c.toString()));
          stream.once('end', () => resolve({ status: Number(head[':status']), type: String(head['content-type']), nosniff: String(head['x-content-type-options']), body }));
          stream.once('error', reject);
          stream.end();
        });
      const metrics = await fetch2('/metrics');
      expect(metrics).toMatchObject({ status: 200, nosniff: 'nosniff' });
      expect(metrics.type).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(metrics.body).toContain('zero_plane_exporter_build_info');
      expect(await fetch2('/')).toMatchObject({ status: 200, type: 'text/html; charset=utf-8' });
      expect(await fetch2('/assets/landing.js')).toMatchObject({ status: 200 });
      expect(await fetch2('/assets/uplot.min.js')).toMatchObject({ status: 200 });
      expect((await fetch2('/no/such/page')).status).toBe(404);
    } finally {
      session.close();
    }
    // HTTP/1.1 clients are still served on the same port.
    expect((await get(`${url}/-/healthy`)).status).toBe(200);
  });

  it('false: only HTTP/1.1 is offered', async () => {
    const { port, url } = await serveWith(`${TLS}http_server_config:\n  http2: false\n`);
    expect(await handshake(port, { ALPNProtocols: ['h2', 'http/1.1'] })).toMatchObject({ alpn: 'http/1.1' });
    expect((await get(`${url}/-/healthy`)).status).toBe(200);
  });
});

describe('listeners and logs', () => {
  it('a repeated --web.listen-address binds each address, and each serves', async () => {
    const serve = await startServe(['--web.listen-address=127.0.0.2:0']);
    running.push(serve);
    const addresses = String(serve.logs.find((l) => l.msg === 'serving')?.addresses).split(',');
    expect(addresses).toHaveLength(2);
    expect(addresses[0]).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(addresses[1]).toMatch(/^127\.0\.0\.2:\d+$/);
    for (const a of addresses) expect((await fetch(`http://${a}/-/healthy`)).status).toBe(200);
  });

  it('--log.format=logfmt writes key=value lines; an unknown format exits 2', () => {
    const out = tempDir('zp-logfmt-');
    const r = runCli(['generate', `--out.root=${out}`, '--log.format=logfmt']);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.trim().split('\n');
    expect(lines.length).toBeGreaterThan(10);
    for (const line of lines) expect(line).toMatch(/^ts=\d{4}-\d\d-\d\dT\S+Z level=info msg=wrote path=\S+$/);
    expect(logfmtLine({ msg: 'file rotated', path: '/var/log/a b.log', n: 3, empty: '', quote: 'say "hi"\n', skipped: undefined })).toBe(
      'msg="file rotated" path="/var/log/a b.log" n=3 empty="" quote="say \\"hi\\"\\n"\n',
    );
    const bad = runCli(['generate', `--out.root=${out}`, '--log.format=xml']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--log.format must be one of json, logfmt');
  });
});
