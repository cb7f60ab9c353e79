// The gate's own rules, on an injected clock (no sleeping): a pushed alert ends at its endsAt or after
// gate.alertTtl without a repeat; only alerts of the gate's scope count; a successful poll of Alertmanager
// supersedes what was pushed before it began; a gate whose Alertmanagers stop answering says it is stale.
// Then the poller against a loopback stand-in of the API: the URLs in order, the first that answers wins.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { AlertmanagerPoller } from '../../../src/gate/alertmanager-poller.js';
import { LoadSheddingGate, type SeenAlert } from '../../../src/gate/load-shedding-gate.js';
import type { WebhookPayload } from '../../../src/gate/webhook-payload.js';
import { createLogger } from '../../../src/server/logger.js';
import { freePort } from '../../helpers/processes.js';

const T0 = Date.parse('2024-05-14T09:43:30.000Z');
const HOUR = 3_600_000;
const TTL = 4 * HOUR + 15 * 60_000;

function p0(fingerprint: string, extra: Record<string, string> = {}, fields: { status?: 'firing' | 'resolved'; endsAt?: string; startsAt?: string } = {}) {
  return {
    status: fields.status ?? 'firing',
    labels: { alertname: 'ZeroPlaneP0DriftWithDegraded', job: 'zero-plane-exporter', priority: 'P0', severity: 'critical', ...extra },
    startsAt: fields.startsAt ?? '2024-05-14T09:41:26.739Z',
    endsAt: fields.endsAt ?? '0001-01-01T00:00:00Z',
    fingerprint,
  } as const;
}

function push(alerts: ReturnType<typeof p0>[], externalURL = 'http://alertmanager-0:9093'): WebhookPayload {
  return { receiver: 'load-shedding-gate', status: 'firing', alerts: alerts.map((a) => ({ ...a, labels: { ...a.labels } })), externalURL, version: '4' };
}

function seen(fingerprint: string, extra: Record<string, string> = {}, endsAtMs = NaN): SeenAlert {
  const a = p0(fingerprint, extra);
  return { fingerprint, labels: { ...a.labels }, startsAt: a.startsAt, endsAtMs };
}

function harness(opts: { scope?: Record<string, string>; alertmanagers?: string[]; pollIntervalMs?: number } = {}) {
  const clock = { now: T0 };
  const gate = new LoadSheddingGate({ pauseLabel: 'priority', pauseValue: 'P0', alertTtlMs: TTL, clock: () => clock.now, ...opts });
  return { clock, gate };
}

describe('expiry of pushed alerts', () => {
  it('does not pause for a pushed alert whose endsAt has passed, even marked firing', () => {
    const { gate } = harness();
    gate.receive(push([p0('a1', {}, { endsAt: new Date(T0 - HOUR).toISOString() })]));
    expect(gate.state()).toMatchObject({ pauseNonCore: false, alertCount: 0 });
    expect(gate.paused.get([])).toBe(0);
  });

  it('ends a pushed alert at its endsAt when one is given (a sender other than Alertmanager)', () => {
    const { clock, gate } = harness();
    gate.receive(push([p0('a1', {}, { endsAt: new Date(T0 + 60_000).toISOString() })]));
    expect(gate.state()).toMatchObject({ pauseNonCore: true, alerts: [{ expiresAt: new Date(T0 + 60_000).toISOString() }] });
    clock.now = T0 + 59_999;
    expect(gate.isPaused).toBe(true);
    clock.now = T0 + 60_000;
    expect(gate.isPaused).toBe(false);
    expect(gate.state().since).toBeNull();
  });

  it('stops pausing for a pushed alert not repeated within gate.alertTtl, and a repeat moves the deadline', () => {
    const { clock, gate } = harness();
    gate.receive(push([p0('a1')]));
    expect(gate.state()).toMatchObject({
      pauseNonCore: true,
      since: new Date(T0).toISOString(),
      alerts: [{ source: 'push', peer: 'http://alertmanager-0:9093', lastSeen: new Date(T0).toISOString(), expiresAt: new Date(T0 + TTL).toISOString() }],
    });
    // Alertmanager's default repeat_interval (4h) comes first: the repeat keeps the pause and its `since`.
    clock.now = T0 + 4 * HOUR;
    gate.receive(push([p0('a1')]));
    clock.now = T0 + TTL + 1;
    expect(gate.state()).toMatchObject({ pauseNonCore: true, since: new Date(T0).toISOString(), alerts: [{ lastSeen: new Date(T0 + 4 * HOUR).toISOString() }] });
    // No repeat after that one: gone at lastSeen + TTL, gauges included (refresh runs before every scrape).
    clock.now = T0 + 4 * HOUR + TTL;
    gate.refresh();
    expect(gate.paused.get([])).toBe(0);
    expect(gate.alertsGauge.get(['push'])).toBe(0);
    expect(gate.state()).toMatchObject({ pauseNonCore: false, since: null, alertCount: 0, alerts: [] });
  });

  it('defaults gate.alertTtl to 4h15m: Alertmanager repeats every 4h, flushed within a 5m group_interval', () => {
    const c = parseConfig('', 'zp.yml');
    expect(c.gate.alertTtl).toBe(TTL);
    expect(c.gate.alertmanagers).toEqual([]);
    expect(c.gate.scope).toEqual({});
  });
});

describe('scope', () => {
  it("pauses cluster b's gate for cluster b's P0 only; an unscoped gate pauses for every cluster", () => {
    const a = harness({ scope: { cluster: 'a' } });
    const b = harness({ scope: { cluster: 'b' } });
    const all = harness();
    for (const h of [a, b, all]) h.gate.receive(push([p0('b1', { cluster: 'b' })]));
    expect(a.gate.isPaused).toBe(false);
    expect(b.gate.isPaused).toBe(true);
    expect(all.gate.isPaused).toBe(true);
    expect(b.gate.state().alerts[0]?.reason).toContain('priority="P0", cluster="b"');
    expect(b.gate.matchers()).toEqual(['priority="P0"', 'cluster="b"']);
  });

  it('rejects a scope on a label the P0 does not carry, naming file, line and key', () => {
    expect(() => parseConfig('gate:\n  scope:\n    cluster: a\n', 'zp.yml')).toThrow(/zp\.yml:3: gate\.scope\.cluster: "cluster" is not one of pack\.aggregationLabels \(job\)/);
    const c = parseConfig('pack:\n  aggregationLabels: [cluster, namespace, job]\ngate:\n  scope: { cluster: a, namespace: llm }\n', 'zp.yml');
    expect(c.gate.scope).toEqual({ cluster: 'a', namespace: 'llm' });
  });

  it('validates the Alertmanager URLs and durations', () => {
    expect(() => parseConfig('gate:\n  alertmanagers: [alertmanager:9093]\n', 'zp.yml')).toThrow(/gate\.alertmanagers\.0: not an Alertmanager base URL/);
    expect(() => parseConfig('gate:\n  alertmanagers: ["http://am:9093/?x=1"]\n', 'zp.yml')).toThrow(/gate\.alertmanagers\.0/);
    expect(() => parseConfig('gate:\n  pollInterval: soon\n', 'zp.yml')).toThrow(/gate\.pollInterval: "soon" is not a duration/);
    expect(() => parseConfig('gate:\n  pollInterval: 10s\n  alertTtl: 5s\n', 'zp.yml')).toThrow(/gate\.alertTtl: `alertTtl` must be longer than `pollInterval`/);
    expect(() => parseConfig('gate:\n  pollInterval: 1s\n  pollTimeout: 2s\n', 'zp.yml')).toThrow(/gate\.pollTimeout/);
    expect(parseConfig('gate:\n  alertmanagers: ["http://am-0:9093", "https://am-1:9093/am"]\n  pollInterval: 500ms\n  pollTimeout: 250ms\n', 'zp.yml').gate).toMatchObject({
      pollInterval: 500,
      pollTimeout: 250,
    });
  });
});

describe('polls of Alertmanager', () => {
  const AM = ['http://am-0:9093', 'http://am-1:9093'];

  it('is stale until a first poll answers, and again once none has for twice the interval', () => {
    const { clock, gate } = harness({ alertmanagers: AM, pollIntervalMs: 1_000 });
    expect(gate.state()).toMatchObject({ mode: 'api', stale: true, sourcesReachable: false, confirmedAt: null });
    gate.applyPoll(AM[1] as string, [seen('a1')], clock.now);
    expect(gate.state()).toMatchObject({ pauseNonCore: true, stale: false, sourcesReachable: true, alerts: [{ source: 'api', peer: AM[1] }] });
    clock.now += 1_000;
    gate.pollFailed(AM[0] as string, 'connect ECONNREFUSED');
    gate.pollFailed(AM[1] as string, 'connect ECONNREFUSED');
    gate.pollRoundFailed();
    const s = gate.state();
    expect(s).toMatchObject({
      stale: false,
      sourcesReachable: false,
      sources: {
        alertmanagers: [
          { url: AM[0], up: false, error: 'connect ECONNREFUSED' },
          { url: AM[1], up: false },
        ],
      },
    });
    clock.now += 1_001;
    expect(gate.state()).toMatchObject({ stale: true, pauseNonCore: true });
    expect(gate.sourceErrors.get(['http://am-0:9093'])).toBe(1);
    gate.refresh();
    expect(gate.stateAge.get([])).toBeCloseTo(2.001, 3);
  });

  it('lets a poll supersede what was pushed before it began (the resolve reached another replica)', () => {
    const { clock, gate } = harness({ alertmanagers: AM });
    gate.receive(push([p0('a1')]));
    clock.now += 10;
    const began = clock.now;
    clock.now += 5;
    gate.receive(push([p0('a2')])); // pushed while the poll was in flight: kept until the next one
    gate.applyPoll(AM[0] as string, [], began);
    expect(gate.state().alerts.map((a) => [a.fingerprint, a.source])).toEqual([['a2', 'push']]);
    clock.now += 1;
    gate.applyPoll(AM[0] as string, [], clock.now);
    expect(gate.isPaused).toBe(false);
  });

  it('does not let a poll begun before a pushed resolve bring the alert back', () => {
    const { clock, gate } = harness({ alertmanagers: AM });
    gate.applyPoll(AM[0] as string, [seen('a1')], clock.now);
    const began = (clock.now += 100);
    clock.now += 50;
    gate.receive(push([p0('a1', {}, { status: 'resolved', endsAt: new Date(clock.now).toISOString() })]));
    gate.applyPoll(AM[0] as string, [seen('a1')], began);
    expect(gate.isPaused).toBe(false);
    // A poll begun after the resolve is believed: the alert fires still.
    gate.applyPoll(AM[0] as string, [seen('a1')], clock.now + 1);
    expect(gate.isPaused).toBe(true);
  });

  it('ignores polled alerts outside its scope, and ends them at their endsAt if polls stop', () => {
    const { clock, gate } = harness({ alertmanagers: AM, scope: { cluster: 'b' } });
    gate.applyPoll(AM[0] as string, [seen('a1', { cluster: 'a' }), seen('b1', { cluster: 'b' }, clock.now + 30_000)], clock.now);
    expect(gate.state().alerts.map((a) => a.fingerprint)).toEqual(['b1']);
    clock.now += 30_000;
    expect(gate.isPaused).toBe(false);
  });
});

describe('AlertmanagerPoller against a loopback API', () => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  });

  it('asks for active, unsilenced, uninhibited pause alerts of its scope, skipping a URL that does not answer', async () => {
    const asked: string[] = [];
    const server = createServer((req, res) => {
      asked.push(req.url ?? '');
      const alert = {
        ...seen('b1', { cluster: 'b' }),
        endsAt: new Date(Date.now() + 60_000).toISOString(),
        updatedAt: new Date().toISOString(),
        status: { state: 'active', silencedBy: [], inhibitedBy: [] },
        receivers: [{ name: 'x' }],
      };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify([alert]));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    const dead = `http://127.0.0.1:${await freePort()}`;
    const live = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const gate = new LoadSheddingGate({ pauseLabel: 'priority', pauseValue: 'P0', scope: { cluster: 'b' }, alertmanagers: [dead, live], pollIntervalMs: 60_000 });
    const poller = new AlertmanagerPoller(gate, { urls: [dead, live], intervalMs: 60_000, timeoutMs: 1_000, maxBodyBytes: 1 << 20, log: createLogger('error', () => undefined) });
    try {
      await poller.start();
      expect(asked).toHaveLength(1);
      const q = new URL(asked[0] as string, live);
      expect(q.pathname).toBe('/api/v2/alerts');
      expect(q.searchParams.get('active')).toBe('true');
      expect(q.searchParams.get('silenced')).toBe('false');
      expect(q.searchParams.get('inhibited')).toBe('false');
      expect(q.searchParams.getAll('filter')).toEqual(['priority="P0"', 'cluster="b"']);
      expect(gate.state()).toMatchObject({
        pauseNonCore: true,
        stale: false,
        alerts: [{ fingerprint: 'b1', source: 'api', peer: live }],
        sources: {
          alertmanagers: [
            { url: dead, up: false },
            { url: live, up: true, error: null },
          ],
        },
      });
      expect(gate.sourceErrors.get([dead])).toBe(1);
    } finally {
      await poller.stop();
    }
  });
});
