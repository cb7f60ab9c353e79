// 431 for oversize request headers over TLS, with real clients (issue 24 item 7): curl and Node's https on
// HTTP/1.1, curl and Node's http2 on HTTP/2, against serve with TLS and HTTP/2 (the default), with TLS
// and HTTP/1.1 only, and plain. Over TLS curl met a reset instead of the 431 in 6 runs of 10: after the
// answer, Node's server kept feeding the rest of the request to its parser, which reported the overflow
// again, and the second report destroyed the socket with bytes unread. Run beside three busy loops, as the
// loaded machine that showed it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect as http2Connect } from 'node:http2';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBinary } from '../../helpers/binaries.js';
import { makeCertificates } from '../../helpers/certificates.js';
import { startServe, type ServeProcess } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const dir = tempDir('zp-431-tls-');
const servers: Record<'tlsHttp2' | 'tlsHttp1' | 'plain', ServeProcess | undefined> = { tlsHttp2: undefined, tlsHttp1: undefined, plain: undefined };
const busy: ChildProcess[] = [];
const httpsUrl = (s: ServeProcess | undefined, tls: boolean) => (s === undefined ? '' : tls ? s.url.replace('http:', 'https:') : s.url);
const curl = requireBinary('curl');

beforeAll(async () => {
  makeCertificates(dir);
  const tls = `tls_server_config:\n  cert_file: ${join(dir, 'server.crt')}\n  key_file: ${join(dir, 'server.key')}\n`;
  writeFileSync(join(dir, 'h2.yml'), tls);
  writeFileSync(join(dir, 'h1.yml'), `${tls}http_server_config:\n  http2: false\n`);
  writeFileSync(join(dir, 'big-100k.txt'), `x-big: ${'a'.repeat(100_000)}\n`);
  writeFileSync(join(dir, 'big-40k.txt'), `x-big: ${'a'.repeat(40_000)}\n`);
  servers.tlsHttp2 = await startServe([`--web.config.file=${join(dir, 'h2.yml')}`], 20_000);
  servers.tlsHttp1 = await startServe([`--web.config.file=${join(dir, 'h1.yml')}`], 20_000);
  servers.plain = await startServe([], 20_000);
  for (let i = 0; i < 3; i++) busy.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
}, 60_000);

afterAll(async () => {
  for (const b of busy) b.kill('SIGKILL');
  for (const s of Object.values(servers)) if (s !== undefined) expect(await s.stop()).toBe(0);
});

const curlStatus = (args: string[]) => {
  const r = spawnSync(curl, ['-sk', '-o', '/dev/null', '-w', '%{http_code} %{http_version}', ...args], { encoding: 'utf8', timeout: 30_000 });
  return `${r.stdout} (curl exit ${r.status})`;
};

function nodeHttp1(url: string, headers: Record<string, string>): Promise<number | string> {
  return new Promise((resolve) => {
    const u = new URL(`${url}/metrics`);
    const send = u.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send({ host: u.hostname, port: u.port, path: u.pathname, headers, rejectUnauthorized: false, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', (err) => resolve((err as NodeJS.ErrnoException).code ?? err.message));
    req.end();
  });
}

describe('431 for request headers past 16 KiB, over TLS too', () => {
  it('HTTP/1.1 with curl: 100 KB of headers get 431 every time, on TLS (with and without HTTP/2 offered) and plain', () => {
    for (const [name, tls] of [
      ['tlsHttp2', true],
      ['tlsHttp1', true],
      ['plain', false],
    ] as const) {
      const url = `${httpsUrl(servers[name], tls)}/metrics`;
      const answers = Array.from({ length: 8 }, () => curlStatus(['--http1.1', '-H', `@${join(dir, 'big-100k.txt')}`, url]));
      // What curl read is the answer; it may still exit non-zero when the server closes while curl is still
      // sending the rest (the close after a 431 is the server's right), but a reset before it is "000".
      expect(
        answers.map((a) => a.slice(0, 7)),
        `${name}: ${answers.join(', ')}`,
      ).toEqual(Array(8).fill('431 1.1'));
      expect(curlStatus(['--http1.1', url]).slice(0, 7), name).toBe('200 1.1');
    }
  }, 120_000);

  it("HTTP/1.1 with Node's client: 20 KB of headers get 431; 1 KB get 200", async () => {
    for (const [name, tls] of [
      ['tlsHttp2', true],
      ['tlsHttp1', true],
      ['plain', false],
    ] as const) {
      const url = httpsUrl(servers[name], tls);
      expect(await nodeHttp1(url, { 'x-big': 'a'.repeat(20_000) }), name).toBe(431);
      expect(await nodeHttp1(url, { 'x-small': 'a'.repeat(1_000) }), name).toBe(200);
    }
  });

  it('HTTP/2 with curl: 40 KB of headers get 431 (as HTTP/2), a plain request 200', () => {
    const url = `${httpsUrl(servers.tlsHttp2, true)}/metrics`;
    for (let i = 0; i < 4; i++) expect(curlStatus(['--http2', '-H', `@${join(dir, 'big-40k.txt')}`, url]).slice(0, 5)).toBe('431 2');
    expect(curlStatus(['--http2', url]).slice(0, 5)).toBe('200 2');
  }, 60_000);

  it("HTTP/2 with Node's client: 100 KB (two fields) and 20 KB get 431, on a session that then still answers 200", async () => {
    const session = http2Connect(httpsUrl(servers.tlsHttp2, true), { rejectUnauthorized: false, maxSendHeaderBlockLength: 1024 * 1024 });
    session.on('error', () => undefined);
    const ask = (headers: Record<string, string>) =>
      new Promise<number | string>((resolve) => {
        const stream = session.request({ ':path': '/metrics', ...headers });
        stream.on('response', (h) => resolve(Number(h[':status'])));
        stream.on('error', (err) => resolve((err as NodeJS.ErrnoException).code ?? err.message));
        stream.resume();
        stream.end();
      });
    try {
      expect(await ask({ 'x-big-1': 'a'.repeat(50_000), 'x-big-2': 'a'.repeat(50_000) })).toBe(431);
      expect(await ask({ 'x-big': 'a'.repeat(20_000) })).toBe(431);
      expect(await ask({ 'x-small': 'a'.repeat(1_000) })).toBe(200);
    } finally {
      session.close();
    }
  });
});
