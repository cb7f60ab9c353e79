// --web.config.file (exporter-toolkit format) on a real `serve` process: HTTPS with a self-signed
// certificate made here by openssl, basic auth (bcrypt) on every endpoint, client certificates, and what
// happens to clients that get it wrong (401, a plain-HTTP 400, a failed handshake) while the exporter
// keeps serving. A bad web config exits 2 naming the file, the line and the key.
import { tempDir } from '../../helpers/temp-dir.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import express from 'express';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../../src/config/load.js';
import { basicAuth, parseBasic } from '../../../src/server/basic-auth.js';
import { BcryptWorker, type Verifier } from '../../../src/server/bcrypt-verifier.js';
import { listen, boundAddress } from '../../../src/server/http-server.js';
import { createLogger } from '../../../src/server/logger.js';
import { parseWebConfig, subjectAltNames } from '../../../src/server/web-config.js';
import { makeCertificates as makeCertificatesIn } from '../../helpers/certificates.js';
import { runCli, startServe, type ServeProcess } from '../../helpers/cli-process.js';

const dir = tempDir('zp-web-config-');
const path = (name: string) => join(dir, name);

const makeCertificates = () => makeCertificatesIn(dir);

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

interface Call {
  method?: string;
  auth?: string;
  headers?: Record<string, string>;
  body?: string;
  ca?: Buffer | null;
  cert?: Buffer;
  key?: Buffer;
}

/** One HTTPS request; rejects when the connection fails (handshake refused, reset). */
function call(url: string, opts: Call = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = httpsRequest(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: opts.method ?? 'GET',
        headers: { ...opts.headers, ...(opts.auth === undefined ? {} : { authorization: `Basic ${Buffer.from(opts.auth).toString('base64')}` }) },
        ...(opts.ca === null ? {} : { ca: opts.ca ?? readFileSync(path('server.crt')) }),
        ...(opts.cert === undefined ? {} : { cert: opts.cert, key: opts.key }),
        agent: false,
        timeout: 5_000,
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.once('error', reject);
      },
    );
    req.once('timeout', () => req.destroy(new Error('timed out')));
    req.once('error', reject);
    req.end(opts.body);
  });
}

function httpsUrl(serve: ServeProcess): string {
  const serving = serve.logs.find((l) => l.msg === 'serving');
  expect(serving?.scheme).toBe('https');
  return `https://${serving?.address as string}`;
}

const PASSWORD = 'corr3ct horse';
const running: ServeProcess[] = [];
let alice: string;
let bob: string;

beforeAll(() => {
  makeCertificates();
  // Cost 4 keeps the test fast; htpasswd writes $2y$, bcryptjs $2b$: both are taken.
  alice = bcrypt.hashSync(PASSWORD, 4).replace(/^\$2b\$/, '$2y$');
  bob = bcrypt.hashSync('bobs password', 4);
  // These tests fail logins on purpose, many from one address: past the default burst they would get 429.
  writeFileSync(path('zp.yml'), 'ingest:\n  enabled: true\nweb:\n  basicAuth:\n    failedLoginBurst: 1000\n');
});

afterAll(async () => {
  for (const s of running.splice(0)) expect(await s.stop()).toBe(0);
});

async function serveWith(webConfig: string, extra: string[] = []): Promise<{ serve: ServeProcess; url: string }> {
  const file = path(`web-${running.length}.yml`);
  writeFileSync(file, webConfig);
  const serve = await startServe([`--web.config.file=${file}`, `--config.file=${path('zp.yml')}`, ...extra]);
  running.push(serve);
  return { serve, url: httpsUrl(serve) };
}

describe('HTTPS with basic auth on every endpoint', () => {
  let serve: ServeProcess;
  let url: string;
  beforeAll(async () => {
    ({ serve, url } = await serveWith(
      [
        'tls_server_config:',
        '  cert_file: server.crt     # relative to this file, as in the exporter toolkit',
        '  key_file: server.key',
        'http_server_config:',
        '  headers:',
        '    X-Frame-Options: deny',
        '    Strict-Transport-Security: max-age=31536000',
        'basic_auth_users:',
        `  alice: ${alice}`,
        `  bob: ${bob}`,
        '',
      ].join('\n'),
    ));
  });

  const ENDPOINTS: Call[] = [{ method: 'GET' }, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: '{"latency_ms":183}\n' }];
  const PATHS = ['/metrics', '/', '/-/healthy', '/-/ready', '/api/v1/gate', '/api/v1/signals', '/no/such/page'];

  it('the right credentials get through, with the configured response headers', async () => {
    for (const p of ['/metrics', '/', '/-/healthy', '/-/ready', '/api/v1/gate', '/api/v1/signals']) {
      const r = await call(`${url}${p}`, { auth: `alice:${PASSWORD}` });
      expect(r.status, p).toBe(200);
      expect(r.headers['x-frame-options']).toBe('deny');
      expect(r.headers['strict-transport-security']).toBe('max-age=31536000');
    }
    expect((await call(`${url}/metrics`, { auth: 'bob:bobs password' })).status).toBe(200);
    const ingested = await call(`${url}/api/v1/ingest`, { auth: `alice:${PASSWORD}`, ...ENDPOINTS[1] });
    expect(ingested.status).toBe(200);
    expect(JSON.parse(ingested.body)).toEqual({ accepted: 1, rejected: 0, reasons: {} });
  });

  it('missing, wrong or malformed credentials get 401 with WWW-Authenticate everywhere, and ingest counts nothing', async () => {
    const linesBefore = /zero_plane_exporter_lines_total\{source="http"\} (\d+)/.exec((await call(`${url}/metrics`, { auth: `alice:${PASSWORD}` })).body)?.[1];
    const wrong: (string | undefined)[] = [undefined, 'alice:wrong', `mallory:${PASSWORD}`, `bob:${PASSWORD}`, 'alice'];
    for (const auth of wrong) {
      for (const p of PATHS) {
        const r = await call(`${url}${p}`, auth === undefined ? {} : { auth });
        expect(r.status, `${p} ${auth}`).toBe(401);
        expect(r.headers['www-authenticate']).toBe('Basic realm="zero-plane-exporter"');
        expect(JSON.parse(r.body)).toHaveProperty('error');
      }
      for (const p of ['/api/v1/ingest', '/api/v1/alerts/webhook']) {
        const r = await call(`${url}${p}`, { ...ENDPOINTS[1], ...(auth === undefined ? {} : { auth }) });
        expect(r.status, `POST ${p} ${auth}`).toBe(401);
      }
    }
    const bearer = await call(`${url}/metrics`, { headers: { authorization: 'Bearer something' } });
    expect(bearer.status).toBe(401);
    const linesAfter = /zero_plane_exporter_lines_total\{source="http"\} (\d+)/.exec((await call(`${url}/metrics`, { auth: `alice:${PASSWORD}` })).body)?.[1];
    expect(linesAfter).toBe(linesBefore);
  });

  it('plain HTTP to the TLS port gets a 400 that says why, garbage is dropped, and the exporter keeps serving', async () => {
    const port = new URL(url).port;
    const plain = await new Promise<Reply>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/metrics', agent: false }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.once('error', reject);
      req.end();
    });
    expect(plain.status).toBe(400);
    expect(plain.body).toBe('Client sent an HTTP request to an HTTPS server.\n');

    const garbage = await new Promise<string>((resolve) => {
      const socket = connect(Number(port), '127.0.0.1', () => socket.write(Buffer.from([0x00, 0x01, 0x02, 0xff, 0x10, 0x00, 0x00, 0x00])));
      socket.on('error', (e) => resolve(`error ${e.message}`));
      socket.once('close', () => resolve('closed'));
      socket.resume();
    });
    expect(garbage).toMatch(/closed|error/);

    // A client that does not trust the certificate fails its handshake; the server does not care.
    await expect(call(`${url}/metrics`, { ca: null, auth: `alice:${PASSWORD}` })).rejects.toThrow(/self-signed|self signed/);

    expect((await call(`${url}/-/healthy`, { auth: `alice:${PASSWORD}` })).status).toBe(200);
    expect(serve.child.exitCode).toBeNull();
    expect(serve.logs.filter((l) => l.unstructured !== undefined || l.level === 'error')).toEqual([]);
    expect(serve.logs.some((l) => l.msg === 'basic auth failed')).toBe(true);
  });
});

describe('client certificates (RequireAndVerifyClientCert)', () => {
  const clientCert = () => ({ cert: readFileSync(path('client.crt')), key: readFileSync(path('client.key')) });
  const rogueCert = () => ({ cert: readFileSync(path('rogue.crt')), key: readFileSync(path('rogue.key')) });
  const tls = (sans: string) =>
    [
      'tls_server_config:',
      '  cert_file: server.crt',
      '  key_file: server.key',
      '  client_auth_type: RequireAndVerifyClientCert',
      '  client_ca_file: ca.crt',
      `  client_allowed_sans: [${sans}]`,
      '',
    ].join('\n');

  it('a certificate signed by client_ca_file with an allowed SAN gets in; none, a foreign one or another SAN do not', async () => {
    const { serve, url } = await serveWith(tls('prometheus'));
    expect((await call(`${url}/metrics`, clientCert())).status).toBe(200);
    await expect(call(`${url}/metrics`)).rejects.toThrow();
    await expect(call(`${url}/metrics`, rogueCert())).rejects.toThrow();
    expect((await call(`${url}/-/healthy`, clientCert())).status).toBe(200);

    const other = await serveWith(tls('grafana'));
    await expect(call(`${other.url}/metrics`, clientCert())).rejects.toThrow();
    expect(other.serve.child.exitCode).toBeNull();
    expect([...serve.logs, ...other.serve.logs].filter((l) => l.unstructured !== undefined || l.level === 'error')).toEqual([]);
  });
});

describe('a bad web config exits 2 naming the file, the line and the key', () => {
  const problems = (text: string): string => {
    try {
      parseWebConfig(text, path('bad.yml'));
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as Error).message;
    }
    throw new Error('no error');
  };
  const file = path('bad.yml');

  it('unknown keys, wrong types, hashes that are not bcrypt, user names with a colon', () => {
    expect(problems('tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  cert_fiel: x\n')).toMatch(new RegExp(`^${file}:2: tls_server_config: Unrecognized key: "cert_fiel"`));
    expect(problems('basic_auth_users:\n  alice: hunter2\n')).toMatch(new RegExp(`^${file}:2: basic_auth_users.alice: not a bcrypt hash`));
    expect(problems(`basic_auth_users:\n  "a:b": ${alice}\n`)).toMatch(new RegExp(`^${file}:2: basic_auth_users.a:b: .*without ":"`));
    expect(problems('tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  min_version: TLS14\n')).toMatch(new RegExp(`${file}:4: tls_server_config.min_version: `));
    expect(problems('rate_limit:\n  interval: 1x\n')).toMatch(/:2: rate_limit.interval: "1x" is not a Go duration/);
    expect(problems('tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  cipher_suites: [TLS_RSA_WITH_RC4_128_SHA]\n')).toMatch(
      /:4: tls_server_config.cipher_suites.0: unknown cipher TLS_RSA_WITH_RC4_128_SHA/,
    );
    expect(problems('http_server_config:\n  headers:\n    X-Frame-Options: allow\n')).toMatch(/:3: http_server_config.headers.X-Frame-Options: must be deny or sameorigin/);
    expect(problems('tls_server_config: [\n')).toMatch(new RegExp(`^${file}:\\d+: \\(top level\\): `));
  });

  it("missing or unreadable TLS material, a key that is not the certificate's, inconsistent client auth", () => {
    expect(problems('tls_server_config:\n  key_file: server.key\n')).toMatch(new RegExp(`^${file}:2: tls_server_config.cert_file: missing`));
    expect(problems('tls_server_config:\n  cert_file: server.crt\n  key_file: nope.key\n')).toMatch(/:3: tls_server_config.key_file: nope.key: cannot read: ENOENT/);
    expect(problems('tls_server_config:\n  cert_file: server.crt\n  key_file: client.key\n')).toMatch(/:3: tls_server_config.key_file: does not belong to the certificate/);
    expect(problems('tls_server_config:\n  cert_file: server.key\n  key_file: server.key\n')).toMatch(/:2: tls_server_config.cert_file: not a PEM certificate/);
    expect(problems('tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_ca_file: ca.crt\n')).toMatch(
      /tls_server_config.client_auth_type: client_ca_file is set but client_auth_type is NoClientCert/,
    );
    expect(problems('tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_auth_type: RequireAndVerifyClientCert\n')).toMatch(/tls_server_config.client_ca_file: missing/);
  });

  it('the CLI exits 2 with the message, for serve and demo, before serving anything', () => {
    writeFileSync(file, 'basic_auth_users:\n  alice: hunter2\n');
    for (const command of ['serve', 'demo']) {
      const r = runCli([command, '--web.listen-address=127.0.0.1:0', `--web.config.file=${file}`]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain(`${file}:2: basic_auth_users.alice: not a bcrypt hash`);
    }
    const missing = runCli(['serve', '--web.listen-address=127.0.0.1:0', `--web.config.file=${path('nope.yml')}`]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/nope\.yml: \(top level\): cannot read/);
    expect(runCli(['demo', '--help']).stdout).toContain('--web.config.file');
  });

  it('basic auth together with a bearer token file exits 2: one Authorization header cannot carry both', () => {
    writeFileSync(path('token'), 't0ken\n');
    writeFileSync(path('gate.yml'), `gate:\n  bearerTokenFile: ${path('token')}\n`);
    writeFileSync(file, `basic_auth_users:\n  alice: ${alice}\n`);
    const r = runCli(['serve', '--web.listen-address=127.0.0.1:0', `--web.config.file=${file}`, `--config.file=${path('gate.yml')}`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/gate.bearerTokenFile cannot be combined with basic_auth_users .* basic_auth/);
  });
});

describe('basic auth: bcrypt once per credential, not per scrape', () => {
  const servers: { close(): void; closeAllConnections(): void }[] = [];
  afterEach(() => {
    for (const s of servers.splice(0)) {
      s.close();
      s.closeAllConnections();
    }
    vi.restoreAllMocks();
  });

  it('a verified password is remembered; a wrong one is checked (against a real hash) every time', async () => {
    const worker = new BcryptWorker();
    const hashes: string[] = [];
    const verifier: Verifier = {
      verify: (password, hash, pad) => {
        hashes.push(hash);
        return worker.verify(password, hash, pad);
      },
      close: () => worker.close(),
    };
    const auth = basicAuth({ users: new Map([['alice', alice]]), log: createLogger('error', () => undefined), verifier });
    const app = express();
    app.use(auth.handler);
    app.get('/metrics', (_req, res) => res.send('ok'));
    const server = await listen(app, '127.0.0.1', 0);
    servers.push(server);
    const get = (auth: string) => fetch(`http://${boundAddress(server)}/metrics`, { headers: { authorization: `Basic ${Buffer.from(auth).toString('base64')}` } });
    for (let i = 0; i < 5; i++) expect((await get(`alice:${PASSWORD}`)).status).toBe(200);
    expect(hashes).toHaveLength(1);
    for (let i = 0; i < 3; i++) expect((await get('alice:nope')).status).toBe(401);
    for (let i = 0; i < 2; i++) expect((await get(`mallory:${PASSWORD}`)).status).toBe(401);
    expect(hashes).toHaveLength(6);
    // The unknown user was checked against a configured hash, so it costs what a known user costs.
    expect(hashes.at(-1)).toBe(alice);
    expect(auth.checks.get(['verified'])).toBe(1);
    expect(auth.checks.get(['failed'])).toBe(5);
    await auth.close();
  });

  it('parses Basic credentials and subjectAltName lists', () => {
    expect(parseBasic(`Basic ${Buffer.from('alice:pa:ss').toString('base64')}`)).toEqual({ user: 'alice', password: 'pa:ss' });
    expect(parseBasic(`basic ${Buffer.from('alice:').toString('base64')}`)).toEqual({ user: 'alice', password: '' });
    expect(parseBasic(`Basic ${Buffer.from('alice').toString('base64')}`)).toBeUndefined();
    expect(parseBasic('Bearer abc')).toBeUndefined();
    expect(subjectAltNames('DNS:prometheus, IP Address:127.0.0.1, email:a@b.c, URI:spiffe://x/y, DNS:"a, b"')).toEqual(['prometheus', '127.0.0.1', 'a@b.c', 'spiffe://x/y', 'a, b']);
  });
});
