// Repeated questions on a running `serve`: lines carrying a prompt hash (the default preset's prompt_hash,
// as zero-plane-exporter/client writes it) feed the top-k, which /metrics exposes as rank-labelled gauges
// (at most repeats.top series, the hash only on the info series) and GET /api/v1/repeats as JSON, behind
// the same basic auth as every other endpoint.
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sample, startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const dir = tempDir('zp-repeats-live-');
const log = join(dir, 'gateway.log');
const PASSWORD = 'repeat after me';
const AUTH = { authorization: `Basic ${Buffer.from(`alice:${PASSWORD}`).toString('base64')}` };
let server: ServeProcess;

const hash = (c: string) => c.repeat(32);
/** hash → [requests, of them cached]: a 5 (2 cached), b 3 (3), c 2 (0), d 1 (1). */
const TRAFFIC: [string, number, number][] = [
  [hash('a'), 5, 2],
  [hash('b'), 3, 3],
  [hash('c'), 2, 0],
  [hash('d'), 1, 1],
];

function lines(): string {
  const out: string[] = [];
  for (const [h, n, cached] of TRAFFIC)
    for (let i = 0; i < n; i++) {
      const headers: Record<string, string> = { 'x-anthropic-layer-id': 'zero-plane-v1', ...(i < cached ? { 'x-anthropic-cached': 'true' } : {}) };
      out.push(JSON.stringify({ ts: Date.now() / 1000, latency_ms: 181, status: 200, model: 'm', route: '/v1/messages', response_headers: headers, prompt_hash: h }));
    }
  // A line without a hash, and one whose "hash" is a prompt: counted as requests, never as repeats.
  out.push(JSON.stringify({ ts: Date.now() / 1000, latency_ms: 181, status: 200, response_headers: {} }));
  out.push(JSON.stringify({ ts: Date.now() / 1000, latency_ms: 181, status: 200, response_headers: {}, prompt_hash: 'What is the refund policy?' }));
  return `${out.join('\n')}\n`;
}

beforeAll(async () => {
  writeFileSync(log, '');
  writeFileSync(join(dir, 'zp.yml'), 'repeats:\n  k: 10\n  top: 3\n');
  writeFileSync(join(dir, 'web.yml'), `basic_auth_users:\n  alice: ${bcrypt.hashSync(PASSWORD, 4)}\n`);
  server = await startServe([`--config.file=${join(dir, 'zp.yml')}`, `--web.config.file=${join(dir, 'web.yml')}`, log]);
  appendFileSync(log, lines());
  await waitFor(
    async () => {
      const t = await (await fetch(`${server.url}/metrics`, { headers: AUTH })).text();
      return sample(t, 'zero_plane_window_requests') === 13 ? true : undefined;
    },
    15_000,
    'the 13 lines in /metrics',
  );
}, 40_000);

afterAll(async () => {
  await server?.stop('SIGKILL');
});

describe('serve: repeated prompts', () => {
  it('exposes the top repeats.top as gauges by rank, the hash only on the info series', async () => {
    const body = await (await fetch(`${server.url}/metrics`, { headers: AUTH })).text();
    const info = body.split('\n').filter((l) => l.startsWith('zero_plane_repeated_prompt_info{'));
    expect(info).toEqual([
      `zero_plane_repeated_prompt_info{rank="1",prompt_hash="${hash('a')}"} 1`,
      `zero_plane_repeated_prompt_info{rank="2",prompt_hash="${hash('b')}"} 1`,
      `zero_plane_repeated_prompt_info{rank="3",prompt_hash="${hash('c')}"} 1`,
    ]);
    expect(sample(body, 'zero_plane_repeated_prompt_requests{rank="1"}')).toBe(5);
    expect(sample(body, 'zero_plane_repeated_prompt_requests{rank="2"}')).toBe(3);
    expect(sample(body, 'zero_plane_repeated_prompt_requests{rank="3"}')).toBe(2);
    expect(sample(body, 'zero_plane_repeated_prompt_requests{rank="4"}')).toBeUndefined();
    expect(sample(body, 'zero_plane_repeated_prompt_cached_ratio{rank="1"}')).toBe(0.4);
    expect(sample(body, 'zero_plane_repeated_prompt_cached_ratio{rank="2"}')).toBe(1);
    expect(body).toContain('# TYPE zero_plane_repeated_prompt_info gauge');
    expect(body).not.toContain('refund');
  });

  it('GET /api/v1/repeats answers the same as JSON, behind the same basic auth', async () => {
    expect((await fetch(`${server.url}/api/v1/repeats`)).status).toBe(401);
    const res = await fetch(`${server.url}/api/v1/repeats`, { headers: AUTH });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const json = (await res.json()) as Record<string, unknown>;
    expect(Date.parse(json.since as string)).toBeLessThanOrEqual(Date.parse(json.now as string));
    expect({ ...json, now: undefined, since: undefined }).toEqual({
      now: undefined,
      since: undefined,
      requests: 11,
      cached: 6,
      cachedShare: 6 / 11,
      k: 10,
      top: [
        { rank: 1, hash: hash('a'), count: 5, error: 0, cached: 2, cachedShare: 0.4 },
        { rank: 2, hash: hash('b'), count: 3, error: 0, cached: 3, cachedShare: 1 },
        { rank: 3, hash: hash('c'), count: 2, error: 0, cached: 0, cachedShare: 0 },
      ],
    });
  });
});
