// The whole chain, live on loopback: the exporter follows a gateway log, a real Prometheus scrapes it and
// evaluates the generated rules (a test copy with 10 s windows and no `for`), a real Alertmanager routes
// with the committed example config, and the exporter's own webhook flips the load-shedding gate.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ZeroPlaneStream } from '../../helpers/zero-plane-stream.js';
import { promQuery, startAlertChain, type AlertChain } from '../../helpers/alert-chain.js';
import { startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const TOKEN = 'chain-test-token';

interface Gate {
  pauseNonCore: boolean;
  since: string | null;
  alerts: { alertname: string }[];
}

let dir: string;
let log: string;
let exporter: ServeProcess;
let chain: AlertChain;
let traffic: ZeroPlaneStream;

async function gate(): Promise<Gate> {
  const res = await fetch(`${exporter.url}/api/v1/gate`, { signal: AbortSignal.timeout(2_000) });
  return (await res.json()) as Gate;
}

describe('exporter → Prometheus → Alertmanager → load-shedding gate', () => {
  let promUrl: string;

  beforeAll(async () => {
    dir = tempDir('zp-chain-');
    log = join(dir, 'gateway.log');
    traffic = new ZeroPlaneStream(log, { slow: (i) => i < 4 });
    writeFileSync(log, '');
    const tokenFile = join(dir, 'gate.token');
    writeFileSync(tokenFile, `${TOKEN}\n`);

    // Exporter, with the gate's bearer token required.
    const exporterConfig = join(dir, 'zp.yml');
    writeFileSync(exporterConfig, `gate:\n  bearerTokenFile: ${tokenFile}\n`);
    exporter = await startServe([`--config.file=${exporterConfig}`, log]);
    chain = await startAlertChain({ dir, exporterUrl: exporter.url, gateTokenFile: tokenFile });
    promUrl = chain.promUrl;
  }, 60_000);

  afterAll(async () => {
    traffic?.stop();
    await Promise.allSettled([chain?.stop(), exporter?.stop('SIGKILL')]);
  });

  it('a healthy log never pauses the gate, while the rules do see it', async () => {
    traffic.start('healthy');
    // The chain is live: the recording rules have the exporter's numbers...
    await waitFor(
      async () => {
        const r = await promQuery(promUrl, 'zero_plane:hit_rate:ratio_rate10s');
        return r.length === 1 && Number(r[0]?.value[1]) === 1 ? true : undefined;
      },
      20_000,
      'Prometheus to record the hit rate',
    );
    // ...and for a further 6 s of healthy traffic the gate stays open.
    const until = Date.now() + 6_000;
    while (Date.now() < until) {
      expect((await gate()).pauseNonCore).toBe(false);
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(await promQuery(promUrl, 'ALERTS{alertname="ZeroPlaneP0DriftWithDegraded"}')).toEqual([]);
  }, 40_000);

  it('drift with degraded requests pauses non-core calls through the P0, and the pause ends when it resolves', async () => {
    traffic.start('drifting');
    const paused = await waitFor(
      async () => {
        const g = await gate();
        return g.pauseNonCore ? g : undefined;
      },
      30_000,
      'the P0 to reach the gate',
    );
    expect(paused.alerts.map((a) => a.alertname)).toEqual(['ZeroPlaneP0DriftWithDegraded']);
    expect(paused.since).not.toBeNull();
    const metrics = await (await fetch(`${exporter.url}/metrics`)).text();
    expect(metrics).toMatch(/^zero_plane_noncore_paused 1$/m);
    // The P0 also paged, on PagerDuty (routed with continue: true).
    await waitFor(() => (chain.sink.pages().some((e) => e.payload?.summary?.includes('ZeroPlaneP0DriftWithDegraded')) ? true : undefined), 10_000, 'the P0 page');

    traffic.start('healthy');
    await waitFor(async () => ((await gate()).pauseNonCore ? undefined : true), 40_000, 'the gate to reopen once the P0 resolves');
  }, 90_000);
});
