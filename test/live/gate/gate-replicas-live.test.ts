// "Done when", live: two exporter replicas (real `serve` processes) behind real HAProxy (round-robin, as
// the shipped Kubernetes Service balances its 2 replicas), one real Alertmanager 0.25 whose gate receiver
// is HAProxy, so each notification reaches one replica only. Each replica reads the P0 from Alertmanager's
// API: both pause within one poll of the P0, both resume within one poll of its resolve, and a replica
// killed and restarted mid-incident comes back paused. gateClient, polling through HAProxy, sends no
// non-core call during the P0 and every one after it. Then two Alertmanagers in a mesh: the gate lists
// both, the first that answers wins, and when it dies the second is read; when both are gone the gate
// says it is stale, and the client's failOpen decides.
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gateClient } from '../../../src/client/index.js';
import { waitFor } from '../../helpers/cli-process.js';
import { gateOf, p0Alert, postAlerts, startAlertmanagers, startBalancer, startReplica, waitForGate, type Alertmanager, type Replica } from '../../helpers/gate-replicas.js';
import { freePort } from '../../helpers/processes.js';
import { tempDir } from '../../helpers/temp-dir.js';

const POLL_MS = 500;
/** Bounded waits: a poll plus a busy machine's delays, far less than any repeat or TTL could explain. */
const CONVERGE_MS = 15_000;

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  await Promise.allSettled(
    cleanups
      .splice(0)
      .reverse()
      .map((c) => c()),
  );
});

function gateConfig(dir: string, name: string, alertmanagers: readonly Alertmanager[]): string {
  const file = join(dir, `${name}.yml`);
  writeFileSync(file, `gate:\n  alertmanagers: [${alertmanagers.map((a) => JSON.stringify(a.url)).join(', ')}]\n  pollInterval: ${POLL_MS}ms\n  pollTimeout: 400ms\n`);
  return file;
}

async function metric(url: string, series: string): Promise<number | undefined> {
  const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(2_000) })).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** The application's AI API: counts the non-core calls that reach it. */
async function countingUpstream(): Promise<{ url: string; calls: () => number; close(): Promise<void> }> {
  let calls = 0;
  const server: Server = createServer((_req, res) => {
    calls++;
    res.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls: () => calls,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('two replicas behind HAProxy, one Alertmanager', () => {
  it('pause together, stay paused across a restart, resume together; gateClient sends no non-core call during the P0', { timeout: 120_000 }, async () => {
    const dir = tempDir('zp-gate-replicas-');
    const ports = [await freePort(), await freePort()];
    const balancer = await startBalancer(dir, ports);
    cleanups.push(() => balancer.stop());
    const [am] = await startAlertmanagers(dir, `${balancer.url}/api/v1/alerts/webhook`);
    if (am === undefined) throw new Error('no Alertmanager');
    cleanups.push(() => am.daemon.stop());
    const config = gateConfig(dir, 'replica', [am]);
    const replicas: Replica[] = [];
    for (const port of ports) {
      const r = await startReplica(port, config);
      replicas.push(r);
      cleanups.push(() => r.process.stop());
    }
    for (const r of replicas) expect(await gateOf(r.url)).toMatchObject({ pauseNonCore: false, stale: false, sourcesReachable: true });

    // The application: a non-core call every 20 ms when the gate allows it, through HAProxy to either replica.
    const upstream = await countingUpstream();
    cleanups.push(() => upstream.close());
    // staleAfter: a loaded machine may slow a few polls; the last answer holds meanwhile (failOpen is not under test here).
    const gate = gateClient({ url: balancer.url, pollInterval: 100, staleAfter: 5_000, failOpen: true, warn: () => undefined });
    cleanups.push(async () => gate.close());
    const app = { running: true, attempts: 0, skipped: 0 };
    const loop = (async () => {
      while (app.running) {
        app.attempts++;
        if (await gate.allows('non-core')) await fetch(upstream.url, { method: 'POST', signal: AbortSignal.timeout(2_000) }).catch(() => undefined);
        else app.skipped++;
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    cleanups.push(async () => {
      app.running = false;
      await loop;
    });
    await waitFor(() => (upstream.calls() > 5 ? true : undefined), CONVERGE_MS, 'non-core calls before the P0');
    expect(app.skipped).toBe(0);

    // The P0 fires: the notification reaches one replica through HAProxy; both read it from the API.
    const firedAt = Date.now();
    await postAlerts([am], [p0Alert({})]);
    const paused = await Promise.all(replicas.map((r, i) => waitForGate(r.url, true, CONVERGE_MS, `replica ${i} to pause`).then((g) => ({ g, ms: Date.now() - firedAt }))));
    // The replica the push reached holds it as pushed until its poll, which the push started, confirms it.
    for (const [i, r] of replicas.entries()) {
      const g = await waitFor(async () => ((await gateOf(r.url)).alerts[0]?.source === 'api' ? gateOf(r.url) : undefined), CONVERGE_MS, `replica ${i} to read the P0 from the API`);
      expect(g.alerts[0]).toMatchObject({ source: 'api', peer: am.url, reason: expect.stringContaining('priority="P0"') });
    }
    // One notification, one replica: the other replica paused from its own poll, never told by a push.
    await waitFor(
      async () => ((await Promise.all(replicas.map((r) => gateOf(r.url)))).some((g) => g.sources.push.lastReceivedAt !== null) ? true : undefined),
      CONVERGE_MS,
      'the webhook to reach a replica',
    );
    const pushed = (await Promise.all(replicas.map((r) => gateOf(r.url)))).filter((g) => g.sources.push.lastReceivedAt !== null);
    expect(pushed).toHaveLength(1);
    expect(pushed[0]?.sources.push.from).toMatch(/^http:\/\/.+:\d+/); // Alertmanager's externalURL
    await waitFor(async () => ((await gate.decide('non-core')).reason === 'paused' ? true : undefined), CONVERGE_MS, 'the client to see the pause');
    // The loop runs one call at a time: once it has skipped one, a call it allowed before the pause has landed.
    const skippedAtPause = app.skipped;
    await waitFor(() => (app.skipped > skippedAtPause ? true : undefined), CONVERGE_MS, 'the application to skip a non-core call');
    const sentBeforePause = upstream.calls();

    // Replica 1 dies mid-incident and comes back: paused from its first answer, read from the API.
    await replicas[1]?.process.stop('SIGKILL');
    const restarted = await startReplica(ports[1] as number, config);
    cleanups.push(() => restarted.process.stop());
    replicas[1] = restarted;
    // Its first answer that is not stale (serve reads before it listens; a loaded machine may make even
    // that read time out, and then it says stale, never open) is paused.
    const answers: { pauseNonCore: boolean; stale: boolean }[] = [];
    const back = await waitFor(
      async () => {
        const g = await gateOf(restarted.url);
        answers.push({ pauseNonCore: g.pauseNonCore, stale: g.stale });
        return g.stale ? undefined : g;
      },
      CONVERGE_MS,
      'the restarted replica to read Alertmanager',
    );
    expect(answers.filter((a) => !a.stale && !a.pauseNonCore)).toEqual([]);
    expect(back).toMatchObject({ pauseNonCore: true, stale: false, alerts: [{ source: 'api', peer: am.url }] });
    expect(back.sources.push.lastReceivedAt).toBeNull();
    expect(await metric(restarted.url, 'zero_plane_noncore_paused')).toBe(1);
    expect(await metric(restarted.url, 'zero_plane_gate_alerts{source="api"}')).toBe(1);
    // The client kept asking both replicas (through HAProxy) all along: not one non-core call went out.
    await waitFor(() => (app.skipped > skippedAtPause + 20 ? true : undefined), CONVERGE_MS, 'the application to skip non-core calls');
    expect(upstream.calls()).toBe(sentBeforePause);

    // The P0 resolves (endsAt now): the resolve reaches one replica; both resume from their polls.
    expect(upstream.calls()).toBe(sentBeforePause); // the whole P0 long, through both replicas
    const resolvedAt = Date.now();
    await postAlerts([am], [p0Alert({}, new Date())]);
    const resumed = await Promise.all(replicas.map((r, i) => waitForGate(r.url, false, CONVERGE_MS, `replica ${i} to resume`).then(() => Date.now() - resolvedAt)));
    await waitFor(async () => ((await gate.decide('non-core')).reason === 'open' ? true : undefined), CONVERGE_MS, 'the client to reopen');
    const skippedAfter = app.skipped;
    const sentAfter = upstream.calls();
    await waitFor(() => (upstream.calls() > sentAfter + 20 ? true : undefined), CONVERGE_MS, 'non-core calls after the P0');
    expect(app.skipped).toBe(skippedAfter); // every one sent after it
    for (const r of replicas) expect(await gateOf(r.url)).toMatchObject({ pauseNonCore: false, alerts: [] });
    console.info(`gate replicas: paused ${paused.map((p) => p.ms).join(' / ')} ms after the P0, resumed ${resumed.join(' / ')} ms after the resolve (poll ${POLL_MS} ms)`);
  });
});

describe('two Alertmanagers in a mesh', () => {
  it('reads the first that answers, the second when the first dies; stale when none answers, and failOpen decides', { timeout: 120_000 }, async () => {
    const dir = tempDir('zp-gate-ha-');
    const port = await freePort();
    const ams = await startAlertmanagers(dir, `http://127.0.0.1:${port}/api/v1/alerts/webhook`, 2);
    for (const am of ams) cleanups.push(() => am.daemon.stop());
    const [first, second] = ams as [Alertmanager, Alertmanager];
    // The mesh is real: each peer knows the other.
    await waitFor(
      async () => {
        const status = (await (await fetch(`${first.url}/api/v2/status`)).json()) as { cluster: { peers: unknown[]; status: string } };
        return status.cluster.peers.length === 2 ? true : undefined;
      },
      CONVERGE_MS,
      'the two Alertmanagers to form a mesh',
    );
    const replica = await startReplica(port, gateConfig(dir, 'ha', ams));
    cleanups.push(() => replica.process.stop());

    await postAlerts(ams, [p0Alert({})]);
    await waitForGate(replica.url, true, CONVERGE_MS, 'the gate to pause');
    // A push may come first; the read it starts confirms the alert from the first Alertmanager.
    const seen = await waitFor(
      async () => {
        const g = await gateOf(replica.url);
        return g.alerts[0]?.source === 'api' ? g : undefined;
      },
      CONVERGE_MS,
      'the gate to read the P0 from the API',
    );
    expect(seen.alerts[0]).toMatchObject({ source: 'api', peer: first.url });
    // Both listed, in order; the second is asked only when the first does not answer in time.
    expect(seen.sources.alertmanagers.map((s) => s.url)).toEqual([first.url, second.url]);
    expect(seen.sources.alertmanagers[0]?.up).toBe(true);

    await first.daemon.stop();
    const viaSecond = await waitFor(
      async () => {
        const g = await gateOf(replica.url);
        return g.alerts[0]?.peer === second.url ? g : undefined;
      },
      CONVERGE_MS,
      'the gate to read the second Alertmanager',
    );
    expect(viaSecond).toMatchObject({ pauseNonCore: true, stale: false, sourcesReachable: true });
    expect(viaSecond.sources.alertmanagers[0]).toMatchObject({ url: first.url, up: false, error: expect.stringMatching(/fetch failed|ECONNREFUSED/) });
    expect(await metric(replica.url, `zero_plane_gate_source_errors_total{source="${first.url}"}`)).toBeGreaterThan(0);

    // Both gone: the gate says it cannot tell, the page too, and each client follows its failOpen.
    await second.daemon.stop();
    const stale = await waitFor(
      async () => {
        const g = await gateOf(replica.url);
        return g.stale ? g : undefined;
      },
      CONVERGE_MS,
      'the gate to say it is stale',
    );
    expect(stale).toMatchObject({ sourcesReachable: false, pauseNonCore: true });
    const signals = (await (await fetch(`${replica.url}/api/v1/signals`)).json()) as { gate: { stale: boolean } };
    expect(signals.gate.stale).toBe(true);
    for (const failOpen of [true, false]) {
      const client = gateClient({ url: replica.url, pollInterval: 100, failOpen, warn: () => undefined });
      try {
        const decision = await waitFor(
          async () => {
            const d = await client.decide('non-core');
            return d.reason === 'paused' ? undefined : d;
          },
          CONVERGE_MS,
          'the client to apply failOpen',
        );
        expect(decision).toEqual(failOpen ? { allowed: true, reason: 'fail_open' } : { allowed: false, reason: 'fail_closed' });
      } finally {
        client.close();
      }
    }
  });
});
