// "Slow ingest bodies hold the in-flight budget": three clients that send most of a body and then one
// byte a second held ingest.maxInFlightBytes, and every other client got 429 for up to Node's 300 s
// request timeout. The attack again on loopback, with ingest.bodyReadTimeout at 3 s: while the three
// trickle, a fourth client is refused (429); once the timeout passes, each trickler gets a JSON 408 and
// the connection closes, nothing of theirs is counted, and the fourth client (and the whole budget) is
// accepted again.
import { request as httpRequest, type ClientRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startServe, type RunningServer } from '../../../src/cli/serve-command.js';
import { configSchema } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/server/logger.js';
import { sample, waitFor } from '../../helpers/cli-process.js';

const GOOD = (latencyMs: number) =>
  JSON.stringify({ latency_ms: latencyMs, status: 200, model: 'claude-sonnet', route: '/v1/messages', response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1' } });
/** Whole lines of about `bytes` bytes. */
const body = (bytes: number) => `${GOOD(183)}\n`.repeat(Math.floor(bytes / (GOOD(183).length + 1)));

const running: RunningServer[] = [];
const clients: { req: ClientRequest; timer: NodeJS.Timeout }[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) {
    clearInterval(c.timer);
    c.req.destroy();
  }
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

interface Answer {
  status: number;
  body: string;
  connection: string | undefined;
}

/** A client that sends `head` of a body declared `declared` bytes long, then one byte a second, until answered. */
function trickle(url: string, head: string, declared: number): Promise<Answer> {
  const u = new URL(`${url}/api/v1/ingest`);
  const req = httpRequest({
    host: u.hostname,
    port: u.port,
    path: u.pathname,
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson', 'content-length': String(declared) },
  });
  const timer = setInterval(() => {
    if (!req.destroyed) req.write(' ');
  }, 1_000);
  clients.push({ req, timer });
  return new Promise((resolve, reject) => {
    req.once('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.once('end', () => {
        clearInterval(timer);
        resolve({ status: res.statusCode ?? 0, body: text, connection: res.headers.connection });
      });
    });
    // Writing on after the server closed the connection may fail; the answer came first.
    req.on('error', (err) => reject(err));
    req.write(head);
  });
}

async function ingest(url: string, text: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${url}/api/v1/ingest`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: text, signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function requests(url: string): Promise<number> {
  return sample(await (await fetch(`${url}/metrics`)).text(), 'zero_plane_exporter_lines_total{source="http"}') ?? 0;
}

describe('slow ingest bodies do not hold the in-flight budget', () => {
  it('three clients trickling a byte a second get 408 at ingest.bodyReadTimeout; a fourth is accepted after it', { timeout: 30_000 }, async () => {
    const logs: Record<string, unknown>[] = [];
    const config = configSchema.parse({
      web: { listenAddress: '127.0.0.1:0' },
      // All clients are 127.0.0.1 here: one source, given the whole budget (the per-source share is tested in reliability-ingest-slow-drip).
      ingest: { enabled: true, maxBodyBytes: 4096, maxInFlightBytes: 3 * 3072, maxInFlightBytesPerSource: 3 * 3072, bodyReadTimeout: '3s' },
    });
    const server = await startServe(
      config,
      createLogger('debug', (line) => logs.push(JSON.parse(line) as Record<string, unknown>)),
    );
    running.push(server);
    const url = server.url;

    // Each sends 3000 of 3100 declared bytes: together 9000 of the 9216-byte budget.
    const head = body(3000);
    const answers = [0, 1, 2].map(() => trickle(url, head.padEnd(3000, ' '), 3100));
    // While they hold it, a fourth client's body does not fit: 429 (before the timeout, which is 3 s).
    const fourth = body(1024);
    await waitFor(async () => ((await ingest(url, fourth)).status === 429 ? true : undefined), 2_000, 'the trickling clients to hold the budget');

    // At the timeout each trickler is answered, while it is still sending: 408, JSON, connection closed.
    for (const answer of await Promise.all(answers)) {
      expect(answer.status).toBe(408);
      expect(JSON.parse(answer.body)).toEqual({ error: expect.stringMatching(/ingest\.bodyReadTimeout \(3000 ms\); nothing from it was counted/) });
      expect(answer.connection).toBe('close');
    }
    // Their bytes went back at once: the fourth client, and then the whole budget at once, are accepted.
    const accepted = await ingest(url, fourth);
    expect(accepted).toEqual({ status: 200, body: { accepted: fourth.split('\n').length - 1, rejected: 0, reasons: {} } });
    const full = await Promise.all([0, 1, 2].map(() => ingest(url, body(3000))));
    expect(full.map((r) => r.status)).toEqual([200, 200, 200]);
    // Nothing the tricklers sent was counted; everything the others sent was.
    const lines = fourth.split('\n').length - 1 + 3 * (body(3000).split('\n').length - 1);
    expect(await requests(url)).toBe(lines);
    expect(logs.filter((l) => l.msg === 'ingest request rejected' && l.status === 408)).toHaveLength(3);
  });
});
