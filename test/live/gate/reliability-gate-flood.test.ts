// "The gate keeps every alert it is sent": with no token by default, 200 posts of 1 MB held 1.2 M alerts
// (RSS 147 MB → 1.05 GB) and /api/v1/gate and /api/v1/signals (polled every second by the landing page)
// returned 230 MB in 3.5–3.9 s. The attack again, against the real exporter over loopback: 2,000 firing
// P0 alerts with distinct fingerprints and bulky labels, then oversized bodies. The gate holds at most
// gate.maxAlerts (the rest counted), the two endpoints answer small and within 1 s, an oversized body gets
// 413 and changes nothing, the dropped alerts are taken once room frees, and `serve` warns at start while
// the webhook has no token.
import { writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startServe, type RunningServer } from '../../../src/cli/serve-command.js';
import { configSchema } from '../../../src/config/schema.js';
import type { GateState } from '../../../src/gate/load-shedding-gate.js';
import { createLogger } from '../../../src/server/logger.js';
import { isOpenWebhookWarning, sample } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const KiB = 1024;
const MiB = 1024 * KiB;

const running: RunningServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

async function serve(gate: Record<string, unknown> = {}): Promise<{ url: string; logs: Record<string, unknown>[] }> {
  const logs: Record<string, unknown>[] = [];
  const config = configSchema.parse({ web: { listenAddress: '127.0.0.1:0' }, gate });
  const server = await startServe(
    config,
    createLogger('info', (line) => logs.push(JSON.parse(line) as Record<string, unknown>)),
  );
  running.push(server);
  return { url: server.url, logs };
}

const fingerprint = (i: number) => i.toString(16).padStart(16, '0');

/** A P0 as Alertmanager sends it, padded with 40 extra labels and a 1 KB annotation-sized label value. */
function p0(i: number, status: 'firing' | 'resolved' = 'firing') {
  const labels: Record<string, string> = { alertname: 'ZeroPlaneP0DriftWithDegraded', job: `gateway-${i}`, priority: 'P0', severity: 'critical', bulk: 'b'.repeat(1024) };
  for (let l = 0; l < 40; l++) labels[`extra_${l}`] = `value-${l}-${'x'.repeat(40)}`;
  return {
    status,
    labels,
    annotations: { summary: 'Zero-Plane p99 above the ceiling with degraded requests' },
    startsAt: '2024-05-14T09:41:26.739266876Z',
    endsAt: status === 'resolved' ? '2024-05-14T10:02:56.739266876Z' : '0001-01-01T00:00:00Z',
    generatorURL: 'http://prometheus-0:9090/graph',
    fingerprint: fingerprint(i),
  };
}

function notification(alerts: unknown[]): string {
  return JSON.stringify({
    receiver: 'load-shedding-gate',
    status: 'firing',
    alerts,
    groupLabels: {},
    commonLabels: {},
    commonAnnotations: {},
    externalURL: 'http://am:9093',
    version: '4',
    groupKey: '{}:{}',
    truncatedAlerts: 0,
  });
}

async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${url}/api/v1/alerts/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A GET that must answer 200 within 1 s; its body and its size in bytes. */
async function getSmall<T>(url: string): Promise<{ bytes: number; body: T }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
  expect(res.status).toBe(200);
  const raw = Buffer.from(await res.arrayBuffer());
  return { bytes: raw.length, body: JSON.parse(raw.toString('utf8')) as T };
}

/** A body sent in chunks with no Content-Length, so the limit is met while reading, not from the header. */
function postChunked(url: string, body: Buffer): Promise<{ status: number; body: string }> {
  const u = new URL(`${url}/api/v1/alerts/webhook`);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: u.hostname, port: u.port, path: u.pathname, method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } });
    req.once('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.once('error', reject);
    for (let at = 0; at < body.length; at += 64 * KiB) req.write(body.subarray(at, at + 64 * KiB));
    req.end();
  });
}

describe('the gate under a flood of webhook alerts', () => {
  it('2,000 P0 alerts: holds gate.maxAlerts (1,000), counts the rest, /api/v1/gate and /api/v1/signals answer small within 1 s', { timeout: 60_000 }, async () => {
    const { url, logs } = await serve();
    // No token: serve said so at start.
    expect(logs.find(isOpenWebhookWarning)).toBeDefined();

    for (let batch = 0; batch < 8; batch++) {
      const body = notification(Array.from({ length: 250 }, (_, k) => p0(batch * 250 + k)));
      expect(Buffer.byteLength(body)).toBeLessThan(MiB);
      expect(await post(url, body)).toEqual({ status: 200, body: { status: 'ok', pauseNonCore: true } });
    }
    const gate = await getSmall<GateState>(`${url}/api/v1/gate`);
    expect(gate.body).toMatchObject({ pauseNonCore: true, alertCount: 1000 });
    expect(gate.body.alerts).toHaveLength(20);
    expect(gate.body.alerts.map((a) => a.fingerprint)).toEqual(Array.from({ length: 20 }, (_, i) => fingerprint(i)));
    // Each listed alert keeps alertname and at most 16 labels, values at most 256 bytes.
    for (const a of gate.body.alerts) {
      expect(a.alertname).toBe('ZeroPlaneP0DriftWithDegraded');
      expect(Object.keys(a.labels).length).toBeLessThanOrEqual(16);
      for (const v of Object.values(a.labels)) expect(Buffer.byteLength(v)).toBeLessThanOrEqual(256);
    }
    expect(gate.bytes).toBeLessThan(64 * KiB);
    const signals = await getSmall<{ gate: GateState }>(`${url}/api/v1/signals`);
    expect(signals.body.gate).toEqual(gate.body);
    expect(signals.bytes).toBeLessThan(128 * KiB);

    const metrics = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(1_000) })).text();
    expect(sample(metrics, 'zero_plane_gate_alerts_dropped_total')).toBe(1000);
    expect(sample(metrics, 'zero_plane_noncore_paused')).toBe(1);

    // Oversized bodies, declared and streamed: 413 with a JSON error, and the gate is unchanged.
    const huge = notification(Array.from({ length: 800 }, (_, k) => p0(5000 + k)));
    expect(Buffer.byteLength(huge)).toBeGreaterThan(2 * MiB);
    for (let i = 0; i < 3; i++) {
      const res = await post(url, huge);
      expect(res.status).toBe(413);
      expect(res.body.error).toMatch(/gate\.maxBodyBytes \(1048576 bytes\)/);
    }
    const streamed = await postChunked(url, Buffer.from(huge));
    expect(streamed.status).toBe(413);
    expect(JSON.parse(streamed.body)).toMatchObject({ error: expect.stringMatching(/maxBodyBytes/) });
    expect((await getSmall<GateState>(`${url}/api/v1/gate`)).body.alertCount).toBe(1000);

    // An alert whose fingerprint is not a fingerprint (Alertmanager's are 16 hex digits) is refused.
    const badFingerprint = await post(url, notification([{ ...p0(9999), fingerprint: 'f'.repeat(100_000) }]));
    expect(badFingerprint.status).toBe(400);
    expect(String(badFingerprint.body.error)).toMatch(/alerts\[0\]\.fingerprint/);
    expect(String(badFingerprint.body.error).length).toBeLessThan(1024);

    // The notification that resolves the held alerts lists the group's others again: now they fit.
    // (Firing listed first: the gate applies a notification's resolved alerts before its firing ones.)
    const resolveHeld = (from: number) => Array.from({ length: 125 }, (_, k) => p0(from + k, 'resolved'));
    const stillFiring = (from: number) => Array.from({ length: 125 }, (_, k) => p0(from + k));
    for (let batch = 0; batch < 8; batch++) {
      expect((await post(url, notification([...stillFiring(1000 + batch * 125), ...resolveHeld(batch * 125)]))).status).toBe(200);
    }
    const relearned = (await getSmall<GateState>(`${url}/api/v1/gate`)).body;
    expect(relearned).toMatchObject({ pauseNonCore: true, alertCount: 1000 });
    expect(relearned.alerts.map((a) => a.fingerprint)).toEqual(Array.from({ length: 20 }, (_, i) => fingerprint(1000 + i)));
    expect(sample(await (await fetch(`${url}/metrics`)).text(), 'zero_plane_gate_alerts_dropped_total')).toBe(1000);
    for (let batch = 0; batch < 8; batch++) expect((await post(url, notification(resolveHeld(1000 + batch * 125)))).status).toBe(200);
    expect((await getSmall<GateState>(`${url}/api/v1/gate`)).body).toMatchObject({ pauseNonCore: false, since: null, alertCount: 0, alerts: [] });
  });

  it('with a token, the flood is refused before its body is read, and serve does not warn', { timeout: 30_000 }, async () => {
    const dir = tempDir('zp-gate-flood-');
    const tokenFile = join(dir, 'gate.token');
    writeFileSync(tokenFile, 'gate-s3cr3t\n');
    const { url, logs } = await serve({ bearerTokenFile: tokenFile, maxAlerts: 10 });
    expect(logs.filter((l) => l.level === 'warn')).toEqual([]);
    const body = notification(Array.from({ length: 250 }, (_, k) => p0(k)));
    for (let i = 0; i < 4; i++) expect((await post(url, body)).status).toBe(401);
    expect((await getSmall<GateState>(`${url}/api/v1/gate`)).body.alertCount).toBe(0);
    // The right token: held up to the configured gate.maxAlerts.
    expect((await post(url, body, { authorization: 'Bearer gate-s3cr3t' })).status).toBe(200);
    expect((await getSmall<GateState>(`${url}/api/v1/gate`)).body).toMatchObject({ pauseNonCore: true, alertCount: 10 });
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(sample(metrics, 'zero_plane_gate_alerts_dropped_total')).toBe(240);
  });
});
