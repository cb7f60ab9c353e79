// HTTP ingest (POST /api/v1/ingest) on loopback: every line a response calls accepted or rejected is
// exactly what /metrics gained, and a body that fails (401, 413, 415, 400, 429, the client going away)
// counts nothing at all.
import { request as httpRequest } from 'node:http';
import { tempDir } from '../../helpers/temp-dir.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { startServe, type RunningServer } from '../../../src/cli/serve-command.js';
import { configSchema } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/server/logger.js';

const GOOD = (latencyMs: number) =>
  JSON.stringify({ latency_ms: latencyMs, status: 200, model: 'claude-sonnet', route: '/v1/messages', response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1' } });
const MAX_LINE = 256;
const TOO_LONG = JSON.stringify({ latency_ms: 1, pad: 'x'.repeat(MAX_LINE) });
/** 6 accepted, 5 rejected (one per reason), a blank line (neither), CRLF endings, no final newline. */
const MIXED = [GOOD(183), 'not json', GOOD(120), '[1,2]', '', GOOD(190), '{"status":200}', GOOD(185), '{"latency_ms":-3}', GOOD(170), TOO_LONG, GOOD(150)].join('\r\n');
const MIXED_OUTCOME = { accepted: 6, rejected: 5, reasons: { invalid_json: 1, not_object: 1, missing_latency: 1, negative_latency: 1, too_long: 1 } };

interface Counted {
  requests: number;
  httpLines: number;
  errors: Record<string, number>;
}

const running: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

async function serve(ingest: Record<string, unknown>): Promise<{ url: string; logs: Record<string, unknown>[] }> {
  const logs: Record<string, unknown>[] = [];
  const config = configSchema.parse({ web: { listenAddress: '127.0.0.1:0' }, input: { maxLineBytes: MAX_LINE }, ingest });
  const server = await startServe(
    config,
    createLogger('debug', (line) => logs.push(JSON.parse(line) as Record<string, unknown>)),
  );
  running.push(server);
  return { url: server.url, logs };
}

/** What /metrics says: records, lines from source "http", parse errors by reason. */
async function counted(url: string): Promise<Counted> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const out: Counted = { requests: 0, httpLines: 0, errors: {} };
  for (const line of text.split('\n')) {
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (line.startsWith('zero_plane_requests_total{')) out.requests += value;
    if (line.startsWith('zero_plane_exporter_lines_total{source="http"}')) out.httpLines += value;
    const reason = /^zero_plane_exporter_parse_errors_total\{reason="([^"]+)"\}/.exec(line)?.[1];
    if (reason !== undefined && value > 0) out.errors[reason] = value;
  }
  return out;
}

function delta(before: Counted, after: Counted) {
  const reasons: Record<string, number> = {};
  for (const [reason, n] of Object.entries(after.errors)) if (n - (before.errors[reason] ?? 0) > 0) reasons[reason] = n - (before.errors[reason] ?? 0);
  return { accepted: after.requests - before.requests, lines: after.httpLines - before.httpLines, reasons };
}

async function ingest(url: string, body: string | Buffer, headers: Record<string, string> = { 'content-type': 'application/x-ndjson' }) {
  const res = await fetch(`${url}/api/v1/ingest`, { method: 'POST', headers, body });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

/** Sends a body over a raw request, so a test controls chunking and can stop half-way. */
function rawRequest(url: string, headers: Record<string, string>) {
  const u = new URL(`${url}/api/v1/ingest`);
  const req = httpRequest({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers });
  const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.once('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.once('error', reject);
  });
  return { req, response };
}

describe('HTTP ingest: accepted and rejected are exactly what /metrics counts', () => {
  it('plain NDJSON with good and bad lines', async () => {
    const { url } = await serve({ enabled: true });
    const before = await counted(url);
    const res = await ingest(url, MIXED);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(MIXED_OUTCOME);
    const d = delta(before, await counted(url));
    expect(d.accepted).toBe(res.body.accepted);
    expect(d.reasons).toEqual(res.body.reasons);
    expect(d.lines).toBe(MIXED_OUTCOME.accepted + MIXED_OUTCOME.rejected);
  });

  it('gzip-encoded NDJSON counts the same as plain', async () => {
    const { url } = await serve({ enabled: true });
    const before = await counted(url);
    const res = await ingest(url, gzipSync(MIXED), { 'content-type': 'application/x-ndjson; charset=utf-8', 'content-encoding': 'gzip' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(MIXED_OUTCOME);
    const d = delta(before, await counted(url));
    expect(d).toEqual({ accepted: 6, lines: 11, reasons: MIXED_OUTCOME.reasons });
  });

  it('text/plain and application/json-seq (RFC 7464 record separators) are taken too', async () => {
    const { url } = await serve({ enabled: true });
    const before = await counted(url);
    expect((await ingest(url, `${GOOD(183)}\n${GOOD(184)}\n`, { 'content-type': 'text/plain' })).body).toEqual({ accepted: 2, rejected: 0, reasons: {} });
    const seq = `\x1e${GOOD(183)}\n\x1e${GOOD(184)}\n\x1enot json\n`;
    expect((await ingest(url, seq, { 'content-type': 'application/json-seq' })).body).toEqual({ accepted: 2, rejected: 1, reasons: { invalid_json: 1 } });
    expect(delta(before, await counted(url))).toEqual({ accepted: 4, lines: 5, reasons: { invalid_json: 1 } });
  });

  it('many requests in parallel: the sum of the responses is the sum in /metrics', async () => {
    const { url } = await serve({ enabled: true });
    const before = await counted(url);
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => ingest(url, i % 2 === 0 ? MIXED : gzipSync(MIXED), i % 2 === 0 ? undefined : { 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' })),
    );
    const accepted = results.reduce((n, r) => n + (r.body.accepted as number), 0);
    const rejected = results.reduce((n, r) => n + (r.body.rejected as number), 0);
    expect(accepted).toBe(240);
    const d = delta(before, await counted(url));
    expect(d.accepted).toBe(accepted);
    expect(d.lines).toBe(accepted + rejected);
  });
});

describe('HTTP ingest: a refused body counts nothing', () => {
  it('401 without or with a wrong bearer token; 200 with the right one', async () => {
    const dir = tempDir('zp-ingest-');
    writeFileSync(join(dir, 'token'), 'in9est-t0ken\n');
    const { url } = await serve({ enabled: true, bearerTokenFile: join(dir, 'token') });
    const before = await counted(url);
    const missing = await ingest(url, MIXED);
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="zero-plane-exporter"');
    expect(missing.body.error).toMatch(/missing/);
    const wrong = await ingest(url, MIXED, { 'content-type': 'application/x-ndjson', authorization: 'Bearer nope' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toMatch(/invalid/);
    expect(delta(before, await counted(url))).toEqual({ accepted: 0, lines: 0, reasons: {} });
    const right = await ingest(url, MIXED, { 'content-type': 'application/x-ndjson', authorization: 'Bearer in9est-t0ken' });
    expect(right.status).toBe(200);
    expect(right.body).toEqual(MIXED_OUTCOME);
  });

  it('413 for a body over maxBodyBytes, whether declared or streamed, and the connection still works', async () => {
    const { url } = await serve({ enabled: true, maxBodyBytes: 4096 });
    const before = await counted(url);
    const lines = `${Array.from({ length: 100 }, (_, i) => GOOD(100 + i)).join('\n')}\n`;
    expect(Buffer.byteLength(lines)).toBeGreaterThan(4096);
    const declared = await ingest(url, lines);
    expect(declared.status).toBe(413);
    expect(declared.body.error).toMatch(/maxBodyBytes \(4096 bytes\); nothing from it was counted/);

    // Chunked, no Content-Length: good lines arrive first, then the limit is crossed mid-body.
    const { req, response } = rawRequest(url, { 'content-type': 'application/x-ndjson', 'transfer-encoding': 'chunked' });
    for (let i = 0; i < 100; i++) req.write(`${GOOD(100 + i)}\n`);
    req.end();
    const streamed = await response;
    expect(streamed.status).toBe(413);
    expect(delta(before, await counted(url))).toEqual({ accepted: 0, lines: 0, reasons: {} });
    expect((await ingest(url, `${GOOD(183)}\n`)).body).toEqual({ accepted: 1, rejected: 0, reasons: {} });
  });

  it('413 for a gzip bomb: the decompressed size is limited too', async () => {
    const { url, logs } = await serve({ enabled: true, maxBodyBytes: 1024 * 1024 });
    const before = await counted(url);
    // 64 MiB of valid lines that compress to well under the 1 MiB limit.
    const bomb = gzipSync(Buffer.from(`${GOOD(183)}\n`.repeat(Math.ceil((64 * 1024 * 1024) / (GOOD(183).length + 1)))), { level: 9 });
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const res = await ingest(url, bomb, { 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' });
    expect(res.status).toBe(413);
    expect(res.body.error).toMatch(/decompressed body exceeds ingest.maxBodyBytes/);
    expect(delta(before, await counted(url))).toEqual({ accepted: 0, lines: 0, reasons: {} });
    expect(logs.filter((l) => l.level === 'error')).toEqual([]);
  });

  it('415 for another Content-Type, none, another charset or another Content-Encoding', async () => {
    const { url } = await serve({ enabled: true });
    const before = await counted(url);
    for (const headers of [
      { 'content-type': 'application/json' },
      {} as Record<string, string>,
      { 'content-type': 'text/plain; charset=iso-8859-1' },
      { 'content-type': 'application/x-ndjson', 'content-encoding': 'br' },
    ]) {
      // A Buffer, so fetch adds no Content-Type of its own.
      const res = await ingest(url, Buffer.from(MIXED), headers);
      expect(res.status, JSON.stringify(headers)).toBe(415);
      expect(typeof res.body.error).toBe('string');
    }
    expect(delta(before, await counted(url))).toEqual({ accepted: 0, lines: 0, reasons: {} });
  });

  it('400 for a body that is not gzip, or gzip cut off half-way', async () => {
    const { url } = await serve({ enabled: true });
    const before = await counted(url);
    const gz = { 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' };
    const notGzip = await ingest(url, MIXED, gz);
    expect(notGzip.status).toBe(400);
    expect(notGzip.body.error).toMatch(/not valid gzip/);
    const whole = gzipSync(`${Array.from({ length: 200 }, (_, i) => GOOD(100 + i)).join('\n')}\n`);
    const cut = await ingest(url, whole.subarray(0, Math.floor(whole.length * 0.8)), gz);
    expect(cut.status).toBe(400);
    expect(delta(before, await counted(url))).toEqual({ accepted: 0, lines: 0, reasons: {} });
  });

  it('a client that goes away mid-body counts nothing, and the exporter keeps serving', async () => {
    const { url } = await serve({ enabled: true });
    const before = await counted(url);
    const { req, response } = rawRequest(url, { 'content-type': 'application/x-ndjson', 'content-length': '100000' });
    response.catch(() => undefined);
    req.write(`${GOOD(183)}\n${GOOD(184)}\n`);
    await new Promise((r) => setTimeout(r, 100));
    req.destroy();
    await new Promise((r) => setTimeout(r, 100));
    expect(delta(before, await counted(url))).toEqual({ accepted: 0, lines: 0, reasons: {} });
    expect((await ingest(url, `${GOOD(183)}\n`)).status).toBe(200);
  });

  it('429 with Retry-After while concurrent bodies hold maxInFlightBytes; accepted once they are done', async () => {
    const { url } = await serve({ enabled: true, maxBodyBytes: 4096, maxInFlightBytes: 4096 });
    const before = await counted(url);
    // A slow upload holds 3 KiB of the 4 KiB budget.
    const slow = rawRequest(url, { 'content-type': 'application/x-ndjson', 'transfer-encoding': 'chunked' });
    const held = `${GOOD(183)}\n`.repeat(Math.floor(3072 / (GOOD(183).length + 1)));
    slow.req.write(held);
    await new Promise((r) => setTimeout(r, 100));
    const busy = await ingest(url, `${GOOD(183)}\n`.repeat(15));
    expect(busy.status).toBe(429);
    expect(busy.headers.get('retry-after')).toBe('1');
    slow.req.end();
    const done = await slow.response;
    expect(done.status).toBe(200);
    const heldLines = held.split('\n').length - 1;
    expect(JSON.parse(done.body)).toEqual({ accepted: heldLines, rejected: 0, reasons: {} });
    expect((await ingest(url, `${GOOD(183)}\n`.repeat(15))).status).toBe(200);
    expect(delta(before, await counted(url))).toEqual({ accepted: heldLines + 15, lines: heldLines + 15, reasons: {} });
  });

  it('disabled (the default): 404 with a JSON error saying how to enable it; other methods 405', async () => {
    const off = await serve({});
    const res = await ingest(off.url, MIXED);
    expect(res.status).toBe(404);
    expect(res.body.error).toMatch(/ingest: \{ enabled: true \}/);
    const on = await serve({ enabled: true });
    const get = await fetch(`${on.url}/api/v1/ingest`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(((await get.json()) as { error: string }).error).toMatch(/use POST/);
  });
});
