// The load-shedding gate over real HTTP on loopback: Alertmanager-shaped webhooks in, gate state out.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { gateRouter } from '../../../src/gate/gate-router.js';
import { LoadSheddingGate, type GateState } from '../../../src/gate/load-shedding-gate.js';
import type { WebhookPayload } from '../../../src/gate/webhook-payload.js';
import { createLogger } from '../../../src/server/logger.js';

const P0_FINGERPRINT = '5ef77f1f8a3ecfa4';

/** One notification exactly as Alertmanager 0.25 POSTs it (notify/webhook Message, version "4"). */
const ALERTMANAGER_P0_FIRING = `{"receiver":"zero-plane-load-shedding","status":"firing","alerts":[{"status":"firing","labels":{"alertname":"ZeroPlaneP0DriftWithDegraded","job":"zero-plane-exporter","instance":"gateway-1:9185","priority":"P0","severity":"critical"},"annotations":{"description":"p99 of Zero-Plane requests is 212 ms (ceiling 194.25 ms) while 37 requests were degraded in the last 5m.","runbook_url":"https://github.com/zero-plane/zero-plane-exporter/blob/main/docs/runbook.md#zeroplanep0driftwithdegraded","summary":"Zero-Plane p99 above the ceiling with degraded requests"},"startsAt":"2024-05-14T09:41:26.739266876Z","endsAt":"0001-01-01T00:00:00Z","generatorURL":"http://prometheus-0:9090/graph?g0.expr=zero_plane%3Ap99_drift%3Aratio_rate5m+%3E+0.05+and+zero_plane%3Adegraded_requests%3Aincrease5m+%3E+0\\u0026g0.tab=1","fingerprint":"${P0_FINGERPRINT}"}],"groupLabels":{"alertname":"ZeroPlaneP0DriftWithDegraded","job":"zero-plane-exporter"},"commonLabels":{"alertname":"ZeroPlaneP0DriftWithDegraded","instance":"gateway-1:9185","job":"zero-plane-exporter","priority":"P0","severity":"critical"},"commonAnnotations":{"description":"p99 of Zero-Plane requests is 212 ms (ceiling 194.25 ms) while 37 requests were degraded in the last 5m.","runbook_url":"https://github.com/zero-plane/zero-plane-exporter/blob/main/docs/runbook.md#zeroplanep0driftwithdegraded","summary":"Zero-Plane p99 above the ceiling with degraded requests"},"externalURL":"http://alertmanager-0:9093","version":"4","groupKey":"{}/{priority=\\"P0\\"}:{alertname=\\"ZeroPlaneP0DriftWithDegraded\\", job=\\"zero-plane-exporter\\"}","truncatedAlerts":0}
`;

type Alert = WebhookPayload['alerts'][number];

function alert(fields: { status?: 'firing' | 'resolved'; name?: string; job?: string; priority?: string; severity?: string; startsAt?: string; fingerprint: string }): Alert {
  const labels: Record<string, string> = {
    alertname: fields.name ?? 'ZeroPlaneP0DriftWithDegraded',
    job: fields.job ?? 'zero-plane-exporter',
    severity: fields.severity ?? 'critical',
  };
  if (fields.priority !== '') labels.priority = fields.priority ?? 'P0';
  const status = fields.status ?? 'firing';
  return {
    status,
    labels,
    annotations: { summary: `${labels.alertname} on ${labels.job}` },
    startsAt: fields.startsAt ?? '2024-05-14T09:41:26.739266876Z',
    endsAt: status === 'resolved' ? '2024-05-14T10:02:56.739266876Z' : '0001-01-01T00:00:00Z',
    generatorURL: 'http://prometheus-0:9090/graph?g0.expr=up&g0.tab=1',
    fingerprint: fields.fingerprint,
  };
}

/** Wraps alerts in the envelope Alertmanager puts around every notification. */
function notification(alerts: Alert[]): WebhookPayload {
  return {
    receiver: 'zero-plane-load-shedding',
    status: alerts.some((a) => a.status === 'firing') ? 'firing' : 'resolved',
    alerts,
    groupLabels: { alertname: alerts[0]?.labels?.alertname ?? '' },
    commonLabels: {},
    commonAnnotations: {},
    externalURL: 'http://alertmanager-0:9093',
    version: '4',
    groupKey: '{}/{priority="P0"}:{alertname="ZeroPlaneP0DriftWithDegraded"}',
    truncatedAlerts: 0,
  };
}

interface Harness {
  url: string;
  gate: LoadSheddingGate;
  logs: Record<string, unknown>[];
  clock: { now: number };
  post(body: unknown, init?: { token?: string; headers?: Record<string, string> }): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }>;
  state(): Promise<GateState>;
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((resolve) => {
          s.close(() => resolve());
          s.closeAllConnections();
        }),
    ),
  );
});

async function start(opts: { bearerToken?: string; pauseLabel?: string; pauseValue?: string; gate?: LoadSheddingGate } = {}): Promise<Harness> {
  const clock = { now: Date.parse('2024-05-14T09:43:30.000Z') };
  const gate = opts.gate ?? new LoadSheddingGate({ pauseLabel: opts.pauseLabel ?? 'priority', pauseValue: opts.pauseValue ?? 'P0', clock: () => clock.now });
  const logs: Record<string, unknown>[] = [];
  const log = createLogger('debug', (line) => logs.push(JSON.parse(line) as Record<string, unknown>));
  const app = express();
  app.use(gateRouter(gate, { bearerToken: opts.bearerToken, log }));
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(0, '127.0.0.1');
    s.once('listening', () => resolve(s));
    s.once('error', reject);
  });
  servers.push(server);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    gate,
    logs,
    clock,
    async post(body, init = {}) {
      const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'Alertmanager/0.25.0', ...init.headers };
      if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`;
      const res = await fetch(`${url}/api/v1/alerts/webhook`, {
        method: 'POST',
        headers,
        body: typeof body === 'string' ? body : JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      return { status: res.status, body: (await res.json()) as Record<string, unknown>, headers: res.headers };
    },
    async state() {
      const res = await fetch(`${url}/api/v1/gate`, { signal: AbortSignal.timeout(5_000) });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('cache-control')).toBe('no-store');
      return (await res.json()) as GateState;
    },
  };
}

function gauge(gate: LoadSheddingGate): number[] {
  const f = gate.paused;
  expect(f.name).toBe('zero_plane_noncore_paused');
  expect(f.type).toBe('gauge');
  return f.entries().map(([labels, value]) => {
    expect(labels).toEqual([]);
    return value;
  });
}

describe('load-shedding gate', () => {
  it('starts open, with the paused gauge present at 0', async () => {
    const h = await start();
    expect(await h.state()).toMatchObject({ pauseNonCore: false, since: null, alertCount: 0, alerts: [] });
    expect(gauge(h.gate)).toEqual([0]);
  });

  it('pauses non-core calls on a firing P0 as Alertmanager sends it', async () => {
    const h = await start();
    const res = await h.post(ALERTMANAGER_P0_FIRING);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok', pauseNonCore: true });
    expect(await h.state()).toMatchObject({
      pauseNonCore: true,
      since: '2024-05-14T09:43:30.000Z',
      alertCount: 1,
      mode: 'push',
      stale: false,
      alerts: [
        {
          alertname: 'ZeroPlaneP0DriftWithDegraded',
          fingerprint: P0_FINGERPRINT,
          labels: { alertname: 'ZeroPlaneP0DriftWithDegraded', job: 'zero-plane-exporter', instance: 'gateway-1:9185', priority: 'P0', severity: 'critical' },
          startsAt: '2024-05-14T09:41:26.739266876Z',
          source: 'push',
          peer: 'http://alertmanager-0:9093',
          lastSeen: '2024-05-14T09:43:30.000Z',
        },
      ],
    });
    expect(gauge(h.gate)).toEqual([1]);
    const paused = h.logs.find((l) => l.msg === 'non-core calls paused');
    expect(paused).toMatchObject({ level: 'info', alerts: 'ZeroPlaneP0DriftWithDegraded', fingerprints: P0_FINGERPRINT, since: '2024-05-14T09:43:30.000Z' });
  });

  it('ignores alerts without the pause label, yet answers 200', async () => {
    const h = await start();
    const res = await h.post(notification([alert({ name: 'ZeroPlaneHitRateLow', severity: 'warning', priority: '', fingerprint: 'a1b2c3d4e5f60718' })]));
    expect(res).toMatchObject({ status: 200, body: { status: 'ok', pauseNonCore: false } });
    expect(await h.state()).toMatchObject({ pauseNonCore: false, since: null, alertCount: 0, alerts: [] });
    expect(gauge(h.gate)).toEqual([0]);
    // A critical alert with another priority is not the P0 either.
    await h.post(notification([alert({ name: 'ZeroPlaneCanaryRollback', priority: 'P1', fingerprint: 'b1b2c3d4e5f60718' })]));
    expect((await h.state()).pauseNonCore).toBe(false);
  });

  it('holds only the matching alerts of a mixed notification', async () => {
    const h = await start();
    await h.post(notification([alert({ name: 'ZeroPlaneDegradedRequests', severity: 'warning', priority: '', fingerprint: '1111111111111111' }), alert({ fingerprint: P0_FINGERPRINT })]));
    const s = await h.state();
    expect(s.pauseNonCore).toBe(true);
    expect(s.alerts.map((a) => a.fingerprint)).toEqual([P0_FINGERPRINT]);
  });

  it('keeps `since` across repeated firing notifications', async () => {
    const h = await start();
    await h.post(ALERTMANAGER_P0_FIRING);
    const first = await h.state();
    h.clock.now += 4 * 3600_000; // Alertmanager's repeat_interval
    await h.post(ALERTMANAGER_P0_FIRING);
    await h.post(notification([alert({ fingerprint: P0_FINGERPRINT })]));
    const again = await h.state();
    expect(again.since).toBe(first.since);
    expect(again.alerts).toHaveLength(1);
    expect(h.logs.filter((l) => l.msg === 'non-core calls paused')).toHaveLength(1);
  });

  it('unpauses when the P0 resolves', async () => {
    const h = await start();
    await h.post(ALERTMANAGER_P0_FIRING);
    h.clock.now += 60_000;
    const res = await h.post(notification([alert({ status: 'resolved', job: 'zero-plane-exporter', fingerprint: P0_FINGERPRINT })]));
    expect(res).toMatchObject({ status: 200, body: { status: 'ok', pauseNonCore: false } });
    expect(await h.state()).toMatchObject({ pauseNonCore: false, since: null, alertCount: 0, alerts: [] });
    expect(gauge(h.gate)).toEqual([0]);
    expect(h.logs.find((l) => l.msg === 'non-core calls resumed')).toMatchObject({ level: 'info', pausedSince: '2024-05-14T09:43:30.000Z' });
  });

  it('stays paused until every P0 (one per job) has resolved', async () => {
    const h = await start();
    await h.post(notification([alert({ job: 'gateway-eu', fingerprint: 'aaaaaaaaaaaaaaaa' })]));
    const since = (await h.state()).since;
    h.clock.now += 30_000;
    await h.post(notification([alert({ job: 'gateway-us', fingerprint: 'bbbbbbbbbbbbbbbb' })]));
    let s = await h.state();
    expect(s.since).toBe(since);
    expect(s.alerts.map((a) => a.labels.job)).toEqual(['gateway-eu', 'gateway-us']);

    await h.post(notification([alert({ status: 'resolved', job: 'gateway-eu', fingerprint: 'aaaaaaaaaaaaaaaa' })]));
    s = await h.state();
    expect(s).toMatchObject({ pauseNonCore: true, since });
    expect(s.alerts.map((a) => a.labels.job)).toEqual(['gateway-us']);
    expect(gauge(h.gate)).toEqual([1]);

    await h.post(notification([alert({ status: 'resolved', job: 'gateway-us', fingerprint: 'bbbbbbbbbbbbbbbb' })]));
    expect(await h.state()).toMatchObject({ pauseNonCore: false, since: null, alertCount: 0, alerts: [] });
    expect(gauge(h.gate)).toEqual([0]);
  });

  it('does not reset `since` when one notification resolves one P0 and fires another', async () => {
    const h = await start();
    await h.post(notification([alert({ job: 'a', fingerprint: 'aaaaaaaaaaaaaaaa' })]));
    const since = (await h.state()).since;
    h.clock.now += 30_000;
    await h.post(notification([alert({ status: 'resolved', job: 'a', fingerprint: 'aaaaaaaaaaaaaaaa' }), alert({ job: 'b', fingerprint: 'bbbbbbbbbbbbbbbb' })]));
    expect(await h.state()).toMatchObject({ pauseNonCore: true, since });
  });

  it('ignores a late firing notification of an already resolved P0 (Alertmanager HA peers), but not a re-fire', async () => {
    const h = await start();
    const startsAt = '2024-05-14T09:41:26.739266876Z';
    await h.post(notification([alert({ fingerprint: P0_FINGERPRINT, startsAt })]));
    await h.post(notification([alert({ status: 'resolved', fingerprint: P0_FINGERPRINT, startsAt })]));
    await h.post(notification([alert({ fingerprint: P0_FINGERPRINT, startsAt })])); // the other peer, late
    expect((await h.state()).pauseNonCore).toBe(false);
    await h.post(notification([alert({ fingerprint: P0_FINGERPRINT, startsAt: '2024-05-14T11:00:00.123Z' })]));
    expect(await h.state()).toMatchObject({ pauseNonCore: true, alerts: [{ fingerprint: P0_FINGERPRINT, startsAt: '2024-05-14T11:00:00.123Z' }] });
  });

  it('honours a configured pause label and value', async () => {
    const h = await start({ pauseLabel: 'shed', pauseValue: 'noncore' });
    await h.post(ALERTMANAGER_P0_FIRING);
    expect((await h.state()).pauseNonCore).toBe(false);
    const a = alert({ fingerprint: 'cccccccccccccccc' });
    a.labels.shed = 'noncore';
    await h.post(notification([a]));
    expect((await h.state()).pauseNonCore).toBe(true);
    expect(h.gate.paused.help).toContain('shed="noncore"');
  });

  it('accepts fields a newer Alertmanager may add, and forgives odd optional ones', async () => {
    const h = await start();
    const body = JSON.parse(ALERTMANAGER_P0_FIRING) as Record<string, unknown> & { alerts: Record<string, unknown>[] };
    body.version = '5';
    body.futureEnvelopeField = { nested: [1, 2, 3] };
    body.commonAnnotations = null;
    const first = body.alerts[0] as Record<string, unknown>;
    first.silenceURL = 'http://alertmanager-0:9093/#/silences/new';
    first.annotations = null;
    first.values = { B: 0.21 };
    const res = await h.post(body);
    expect(res).toMatchObject({ status: 200, body: { pauseNonCore: true } });
  });

  it('parses the body as JSON whatever the Content-Type says', async () => {
    const h = await start();
    const res = await h.post(ALERTMANAGER_P0_FIRING, { headers: { 'content-type': 'text/plain' } });
    expect(res).toMatchObject({ status: 200, body: { pauseNonCore: true } });
  });

  describe('malformed bodies are a 400 with a JSON error and change nothing', () => {
    const held = notification([alert({ fingerprint: P0_FINGERPRINT })]);
    // Each would also resolve the held P0 if it were (wrongly) applied in part.
    const resolveHeld = alert({ status: 'resolved', fingerprint: P0_FINGERPRINT });
    const cases: [string, string, RegExp][] = [
      ['not JSON', 'alertname=ZeroPlaneP0DriftWithDegraded', /not valid JSON/],
      ['truncated JSON', ALERTMANAGER_P0_FIRING.slice(0, 200), /not valid JSON/],
      ['a JSON array', JSON.stringify([resolveHeld]), /body: .*expected object, received array/],
      ['a JSON string', '"resolved"', /not valid JSON/],
      ['alerts missing', JSON.stringify({ ...notification([]), alerts: undefined }), /alerts: .*expected array/],
      ['alerts not an array', JSON.stringify({ ...notification([]), alerts: { 0: resolveHeld } }), /alerts: .*expected array/],
      ['an alert without fingerprint', JSON.stringify(notification([resolveHeld, { ...alert({ fingerprint: 'x' }), fingerprint: undefined } as unknown as Alert])), /alerts\[1\]\.fingerprint/],
      ['an empty fingerprint', JSON.stringify(notification([resolveHeld, alert({ fingerprint: '' })])), /alerts\[1\]\.fingerprint/],
      ['status "bogus"', JSON.stringify(notification([resolveHeld, { ...alert({ fingerprint: 'dddddddddddddddd' }), status: 'bogus' } as unknown as Alert])), /alerts\[1\]\.status/],
      ['a non-string label value', JSON.stringify(notification([{ ...resolveHeld, labels: { priority: 'P0', replicas: 3 } } as unknown as Alert])), /alerts\[0\]\.labels\.replicas/],
      ['startsAt not a time', JSON.stringify(notification([{ ...resolveHeld, startsAt: 'yesterday' }])), /alerts\[0\]\.startsAt/],
      ['labels missing', JSON.stringify(notification([{ ...resolveHeld, labels: undefined } as unknown as Alert])), /alerts\[0\]\.labels/],
    ];
    it.each(cases)('%s', async (_name, body, error) => {
      const h = await start();
      await h.post(held);
      const before = await h.state();
      const res = await h.post(body);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(error);
      expect(await h.state()).toEqual(before);
      expect(gauge(h.gate)).toEqual([1]);
    });

    it('an empty body', async () => {
      const h = await start();
      const res = await h.post('');
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/empty body/);
    });
  });

  it('rejects a body over 1 MiB with a JSON 413, and accepts one just under', async () => {
    const h = await start();
    const padded = (bytes: number) => {
      const a = alert({ fingerprint: P0_FINGERPRINT });
      const base = JSON.stringify(notification([{ ...a, annotations: { description: '' } }]));
      return JSON.stringify(notification([{ ...a, annotations: { description: 'x'.repeat(bytes - base.length) } }]));
    };
    const over = padded(1024 * 1024 + 1);
    expect(Buffer.byteLength(over)).toBe(1024 * 1024 + 1);
    const res = await h.post(over);
    expect(res.status).toBe(413);
    expect(res.body.error).toMatch(/gate\.maxBodyBytes \(1048576 bytes\)/);
    expect((await h.state()).pauseNonCore).toBe(false);

    const under = padded(1024 * 1024);
    expect(Buffer.byteLength(under)).toBe(1024 * 1024);
    expect(await h.post(under)).toMatchObject({ status: 200, body: { pauseNonCore: true } });
  });

  it('answers other methods with a JSON 405', async () => {
    const h = await start();
    const res = await fetch(`${h.url}/api/v1/alerts/webhook`, { signal: AbortSignal.timeout(5_000) });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(await res.json()).toMatchObject({ error: expect.stringContaining('GET') });
    const del = await fetch(`${h.url}/api/v1/gate`, { method: 'DELETE', signal: AbortSignal.timeout(5_000) });
    expect(del.status).toBe(405);
  });

  it('turns an exception inside the gate into a JSON 500 and keeps serving', async () => {
    class BrokenGate extends LoadSheddingGate {
      override receive(): void {
        throw new Error('boom');
      }
    }
    const h = await start({ gate: new BrokenGate({ pauseLabel: 'priority', pauseValue: 'P0' }) });
    const res = await h.post(ALERTMANAGER_P0_FIRING);
    expect(res.status).toBe(500);
    expect(res.body.error).toEqual(expect.any(String));
    expect(h.logs.find((l) => l.level === 'error')).toMatchObject({ msg: 'gate request failed', error: 'boom' });
    expect((await h.state()).pauseNonCore).toBe(false);
  });

  describe('bearer token', () => {
    const TOKEN = 's3cr3t-0f-the-alertmanager';

    it('is required when configured', async () => {
      const h = await start({ bearerToken: TOKEN });
      const none = await h.post(ALERTMANAGER_P0_FIRING);
      expect(none.status).toBe(401);
      expect(none.body.error).toEqual(expect.any(String));
      expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);

      for (const wrong of ['nope', `${TOKEN}x`, TOKEN.slice(0, -1), TOKEN.toUpperCase()]) {
        const res = await h.post(ALERTMANAGER_P0_FIRING, { token: wrong });
        expect(res.status).toBe(401);
        expect(res.body.error).toMatch(/invalid bearer token/);
      }
      const basic = await h.post(ALERTMANAGER_P0_FIRING, { headers: { authorization: `Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}` } });
      expect(basic.status).toBe(401);
      expect((await h.state()).pauseNonCore).toBe(false);

      const right = await h.post(ALERTMANAGER_P0_FIRING, { token: TOKEN });
      expect(right).toMatchObject({ status: 200, body: { status: 'ok', pauseNonCore: true } });
      // The auth scheme is case-insensitive (RFC 9110).
      expect((await h.post(ALERTMANAGER_P0_FIRING, { headers: { authorization: `bearer ${TOKEN}` } })).status).toBe(200);
    });

    it('is checked before the body is read', async () => {
      const h = await start({ bearerToken: TOKEN });
      expect((await h.post('{not json', { token: 'wrong' })).status).toBe(401);
      expect((await h.post(`"${'x'.repeat(2 * 1024 * 1024)}"`)).status).toBe(401);
    });

    it('is not needed when none is configured', async () => {
      const h = await start();
      expect((await h.post(ALERTMANAGER_P0_FIRING)).status).toBe(200);
      expect((await h.post(ALERTMANAGER_P0_FIRING, { token: 'anything' })).status).toBe(200);
    });

    it('does not guard the read-only gate state', async () => {
      const h = await start({ bearerToken: TOKEN });
      expect((await h.state()).pauseNonCore).toBe(false);
    });

    it('must not be empty', () => {
      expect(() => gateRouter(new LoadSheddingGate({ pauseLabel: 'priority', pauseValue: 'P0' }), { bearerToken: '', log: createLogger('error', () => {}) })).toThrow(/empty/);
    });
  });
});
