// gzip negotiation (compression.ts) and the shared scrape's one compression per render (shared-scrape.ts).
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { CounterFamily } from '../../../src/metrics/families.js';
import { buildRegistry } from '../../../src/metrics/registry.js';
import { acceptsGzip } from '../../../src/server/compression.js';
import { SharedScrape } from '../../../src/server/shared-scrape.js';

describe('acceptsGzip', () => {
  it.each([
    ['gzip', true],
    ['gzip, deflate, br', true],
    ['GZIP', true],
    ['x-gzip', true],
    ['br;q=1.0, gzip;q=0.5', true],
    ['*', true],
    ['gzip;q=0', false],
    ['gzip;q=0.0, *', false],
    ['*;q=0', false],
    ['deflate, br', false],
    ['identity', false],
    ['', false],
  ])('%j → %s', (header, expected) => {
    expect(acceptsGzip(header)).toBe(expected);
  });
  it('no header: identity', () => expect(acceptsGzip(undefined)).toBe(false));
});

describe('SharedScrape with gzip', () => {
  const family = new CounterFamily('zp_test_requests_total', 'test', ['route']);
  for (let i = 0; i < 5_000; i++) family.inc([`/route/${i}`]);
  const registry = buildRegistry([family], '0.0.0-test');

  it('scrapes read together share one render and one compression; the gzip body is the identity body', async () => {
    const shared = new SharedScrape(registry, () => undefined);
    const bodies = await Promise.all([...Array.from({ length: 10 }, () => shared.body('text', 'gzip')), ...Array.from({ length: 3 }, () => shared.body('text', 'identity'))]);
    expect(shared.renders).toBe(1);
    expect(shared.gzipped).toBe(1);
    const gz = bodies[0];
    const plain = bodies[12];
    if (gz === undefined || plain === undefined) throw new Error('missing bodies');
    for (const b of bodies.slice(0, 10)) expect(b).toBe(gz);
    expect(gz.bytes).toBe(gz.pieces.reduce((n, p) => n + p.length, 0));
    const text = gunzipSync(Buffer.concat(gz.pieces)).toString('utf8');
    expect(text).toBe(Buffer.concat(plain.pieces).toString('utf8'));
    expect(text).toContain('zp_test_requests_total{route="/route/4999"} 1\n');
    // 5,000 similar series compress well: the gzip body is a small part of the text.
    expect(gz.bytes).toBeLessThan(plain.bytes / 4);
  });

  it('a later scrape gets a new render and its own compression, never an old body', async () => {
    const shared = new SharedScrape(registry, () => undefined);
    await shared.body('text', 'gzip');
    await shared.body('text', 'gzip');
    expect([shared.renders, shared.gzipped]).toEqual([2, 2]);
    await shared.body('text', 'identity');
    expect([shared.renders, shared.gzipped]).toEqual([3, 2]);
  });
});
