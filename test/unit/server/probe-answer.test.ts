// What the probe listener's worker answers (probe-answer.ts), from the main thread's heartbeat and readiness,
// and the config keys that set it up, validated with the file, line and key.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { problemOf } from '../../helpers/config-problem.js';
import { defaultConfig } from '../../../src/config/schema.js';
import { HEARTBEAT_BYTES, heartbeatViews, probeAnswer } from '../../../src/server/probe-answer.js';

const TIMEOUT = 10_000;

describe('probeAnswer', () => {
  it('healthy while the heartbeat is at most the stall timeout old, 503 with the age and the key once older', () => {
    expect(probeAnswer('/-/healthy', { sinceBeatMs: 80, ready: false }, TIMEOUT)).toEqual({ status: 200, body: 'zero-plane-exporter is Healthy.\n' });
    expect(probeAnswer('/-/healthy', { sinceBeatMs: TIMEOUT, ready: true }, TIMEOUT).status).toBe(200);
    expect(probeAnswer('/-/healthy?x=1', { sinceBeatMs: TIMEOUT + 1, ready: true }, TIMEOUT)).toEqual({
      status: 503,
      body: 'zero-plane-exporter is not healthy: its main event loop has not run for 10.0 s (web.probeStallTimeout 10.0 s).\n',
    });
  });

  it('ready only when serve says so and its loop turns', () => {
    expect(probeAnswer('/-/ready', { sinceBeatMs: 50, ready: true }, TIMEOUT)).toEqual({ status: 200, body: 'zero-plane-exporter is Ready.\n' });
    expect(probeAnswer('/-/ready', { sinceBeatMs: 50, ready: false }, TIMEOUT)).toEqual({ status: 503, body: 'zero-plane-exporter is not ready.\n' });
    const stalled = probeAnswer('/-/ready', { sinceBeatMs: 25_300, ready: true }, TIMEOUT);
    expect(stalled.status).toBe(503);
    expect(stalled.body).toMatch(/^zero-plane-exporter is not ready: its main event loop has not run for 25\.3 s/);
  });

  it('nothing else: 404, whatever the state', () => {
    for (const url of ['/', '/metrics', '/-/healthy/', '/-/healthyx']) expect(probeAnswer(url, { sinceBeatMs: 0, ready: true }, TIMEOUT).status, url).toBe(404);
  });

  it('the shared memory holds the beat and the ready flag apart, in the bytes both threads agree on', () => {
    const memory = new SharedArrayBuffer(HEARTBEAT_BYTES);
    const { beat, ready } = heartbeatViews(memory);
    Atomics.store(beat, 0, 123_456_789_012n);
    Atomics.store(ready, 0, 1);
    const again = heartbeatViews(memory);
    expect(Atomics.load(again.beat, 0)).toBe(123_456_789_012n);
    expect(Atomics.load(again.ready, 0)).toBe(1);
  });
});

describe('web.probeListenAddress and web.probeStallTimeout', () => {
  it('default: no probe listener, a 10 s stall timeout', () => {
    expect(defaultConfig().web.probeListenAddress).toBeUndefined();
    expect(defaultConfig().web.probeStallTimeout).toBe(10_000);
    const c = parseConfig('web:\n  probeListenAddress: "127.0.0.1:9186"\n  probeStallTimeout: 30s\n', 'zp.yml');
    expect(c.web.probeListenAddress).toBe('127.0.0.1:9186');
    expect(c.web.probeStallTimeout).toBe(30_000);
  });

  it('a bad value names the file, the line and the key', () => {
    expect(problemOf('web:\n  probeListenAddress: "9186"\n')).toMatch(/^zp\.yml:2: web\.probeListenAddress: not HOST:PORT or :PORT/);
    expect(problemOf('web:\n  probeStallTimeout: 200ms\n')).toMatch(/^zp\.yml:2: web\.probeStallTimeout: must be from 1s to 1h/);
    expect(problemOf('web:\n  probeStallTimeout: 2h\n')).toMatch(/^zp\.yml:2: web\.probeStallTimeout: must be from 1s to 1h/);
    expect(problemOf('web:\n  probeStallTimeout: soon\n')).toMatch(/^zp\.yml:2: web\.probeStallTimeout: "soon" is not a duration/);
  });
});
