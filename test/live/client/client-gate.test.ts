// gateClient against a real exporter (`serve`, as users run it) on loopback: a P0 arriving as an
// Alertmanager webhook pauses non-core calls and its resolution resumes them; with the exporter stopped,
// failOpen decides; the client's own metrics say what it knows.
import { afterEach, describe, expect, it } from 'vitest';
import { gateClient, metricsText, type GateClient } from '../../../src/client/index.js';
import { startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { freePort } from '../../helpers/processes.js';

const P0 = {
  status: 'firing',
  labels: { alertname: 'ZeroPlaneP0DriftWithDegraded', job: 'zero-plane-exporter', priority: 'P0', severity: 'critical' },
  annotations: { summary: 'Zero-Plane p99 above the ceiling with degraded requests' },
  startsAt: '2026-05-14T09:41:26.739266876Z',
  endsAt: '0001-01-01T00:00:00Z',
  generatorURL: 'http://prometheus:9090/graph',
  fingerprint: '5ef77f1f8a3ecfa4',
};

async function webhook(exporter: ServeProcess, status: 'firing' | 'resolved'): Promise<void> {
  const alert = { ...P0, status, ...(status === 'resolved' ? { endsAt: '2026-05-14T10:02:56Z' } : {}) };
  const res = await fetch(`${exporter.url}/api/v1/alerts/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ version: '4', status, receiver: 'load-shedding-gate', groupKey: '{}:{}', alerts: [alert] }),
  });
  expect(res.status).toBe(200);
}

const value = (text: string, series: string) => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);

const open: { gates: GateClient[]; exporters: ServeProcess[] } = { gates: [], exporters: [] };
afterEach(async () => {
  for (const g of open.gates.splice(0)) g.close();
  await Promise.all(open.exporters.splice(0).map((e) => e.stop()));
});

function gate(url: string, failOpen = true, extra: { pollInterval?: number } = {}): GateClient {
  const g = gateClient({ url, pollInterval: extra.pollInterval ?? 100, failOpen, warn: () => undefined });
  open.gates.push(g);
  return g;
}

async function exporter(): Promise<ServeProcess> {
  const e = await startServe([]);
  open.exporters.push(e);
  return e;
}

describe('gateClient', () => {
  it('skips non-core calls while a P0 webhook holds the gate, and resumes when it resolves', async () => {
    const e = await exporter();
    const g = gate(e.url);
    let nonCoreSent = 0;
    const maybeSummarise = async () => {
      // The example from docs/client.md: a non-core call, skipped during a P0.
      if (await g.allows('non-core')) nonCoreSent++;
    };
    await maybeSummarise();
    expect(nonCoreSent).toBe(1);
    expect(await g.decide('non-core')).toEqual({ allowed: true, reason: 'open' });

    await webhook(e, 'firing');
    await waitFor(async () => ((await g.allows('non-core')) ? undefined : true), 5_000, 'the client to see the pause');
    await maybeSummarise();
    expect(nonCoreSent).toBe(1);
    expect(await g.decide('non-core')).toEqual({ allowed: false, reason: 'paused' });
    expect(await g.allows('core')).toBe(true);
    expect(g.state()).toMatchObject({ pauseNonCore: true, reachable: true });
    expect(g.state().since).not.toBeNull();
    let text = metricsText([g]);
    expect(value(text, 'zero_plane_gate_client_paused')).toBe(1);
    expect(value(text, 'zero_plane_gate_client_up')).toBe(1);
    expect(value(text, 'zero_plane_gate_client_decisions_total{kind="non-core",decision="skipped",reason="paused"}')).toBeGreaterThanOrEqual(2);
    expect(value(text, 'zero_plane_gate_client_decisions_total{kind="core",decision="allowed",reason="core"}')).toBe(1);

    await webhook(e, 'resolved');
    await waitFor(async () => ((await g.allows('non-core')) ? true : undefined), 5_000, 'the client to see the resume');
    await maybeSummarise();
    expect(nonCoreSent).toBe(2);
    text = metricsText([g]);
    expect(value(text, 'zero_plane_gate_client_paused')).toBe(0);
  });

  for (const failOpen of [true, false]) {
    it(`with the exporter stopped, non-core calls are ${failOpen ? 'allowed (failOpen)' : 'skipped (failOpen: false)'} once the last answer is stale`, async () => {
      const e = await exporter();
      const g = gate(e.url, failOpen);
      expect(await g.decide('non-core')).toEqual({ allowed: true, reason: 'open' });
      await e.stop();
      await waitFor(() => (g.state().reachable ? undefined : true), 5_000, 'a failed poll');
      // Within staleAfter (3 polls) the last answer still holds; past it, the policy.
      await waitFor(async () => ((await g.decide('non-core')).reason === 'open' ? undefined : true), 5_000, 'the answer to go stale');
      expect(await g.decide('non-core')).toEqual(failOpen ? { allowed: true, reason: 'fail_open' } : { allowed: false, reason: 'fail_closed' });
      expect(await g.allows('core')).toBe(true);
      const text = metricsText([g]);
      expect(value(text, 'zero_plane_gate_client_up')).toBe(0);
      expect(value(text, 'zero_plane_gate_client_polls_total{result="error"}')).toBeGreaterThan(0);
      const reason = failOpen ? 'decision="allowed",reason="fail_open"' : 'decision="skipped",reason="fail_closed"';
      expect(value(text, `zero_plane_gate_client_decisions_total{kind="non-core",${reason}}`)).toBeGreaterThan(0);
    });
  }

  it('an exporter never reached: the first answer comes from the policy, without hanging', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    expect(await gate(url, false, { pollInterval: 60_000 }).decide('non-core')).toEqual({ allowed: false, reason: 'fail_closed' });
    expect(await gate(url, true, { pollInterval: 60_000 }).decide('non-core')).toEqual({ allowed: true, reason: 'fail_open' });
  });

  it('a misspelt kind is gated like non-core', async () => {
    const e = await exporter();
    const g = gate(e.url);
    await webhook(e, 'firing');
    await waitFor(async () => ((await g.allows('non-core')) ? undefined : true), 5_000, 'the pause');
    expect(await g.allows('noncore' as 'non-core')).toBe(false);
  });

  it('a wrong option is a clear error', () => {
    expect(() => gateClient({ url: 'not a url' })).toThrow(/^gateClient: url: /);
    expect(() => gateClient({ url: 'http://x', pollInterval: 'often' })).toThrow(/pollInterval/);
  });
});
