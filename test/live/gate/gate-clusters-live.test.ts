// Two clusters, one global Alertmanager 0.25 (aggregation labels [cluster, job]): each cluster's exporter
// has its gate scoped to its cluster (gate.scope, here by --gate.scope as the Kubernetes set passes it).
// Cluster b's P0 pauses b's gate only, even though the webhook of every cluster's P0 reaches a's gate too
// (the wrong route a user might write): a reads the API after the P0 is there and stays open.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, startCommand, waitFor } from '../../helpers/cli-process.js';
import { gateOf, p0Alert, postAlerts, startAlertmanagers, waitForGate, type Replica } from '../../helpers/gate-replicas.js';
import { freePort } from '../../helpers/processes.js';
import { tempDir } from '../../helpers/temp-dir.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  await Promise.allSettled(
    cleanups
      .splice(0)
      .reverse()
      .map((c) => c()),
  );
});

describe('two clusters, one Alertmanager', () => {
  it("cluster b's P0 pauses b's gate only", { timeout: 90_000 }, async () => {
    const dir = tempDir('zp-gate-clusters-');
    const portA = await freePort();
    const [am] = await startAlertmanagers(dir, `http://127.0.0.1:${portA}/api/v1/alerts/webhook`);
    if (am === undefined) throw new Error('no Alertmanager');
    cleanups.push(() => am.daemon.stop());
    const config = join(dir, 'zp.yml');
    writeFileSync(config, `pack:\n  aggregationLabels: [cluster, job]\ngate:\n  alertmanagers: [${JSON.stringify(am.url)}]\n  pollInterval: 500ms\n  pollTimeout: 400ms\n`);
    const gates: Record<'a' | 'b', Replica> = {} as Record<'a' | 'b', Replica>;
    for (const [cluster, port] of [
      ['a', portA],
      ['b', await freePort()],
    ] as const) {
      const p = await startCommand('serve', [`--web.listen-address=127.0.0.1:${port}`, `--config.file=${config}`, `--gate.scope=cluster=${cluster}`], 20_000);
      cleanups.push(() => p.stop());
      gates[cluster] = { port, url: `http://127.0.0.1:${port}`, process: p };
    }
    expect(await gateOf(gates.b.url)).toMatchObject({ scope: { cluster: 'b' }, pauseNonCore: false });

    await postAlerts([am], [p0Alert({ cluster: 'b' })]);
    const b = await waitForGate(gates.b.url, true, 15_000, "b's gate to pause");
    expect(b.alerts[0]?.reason).toContain('cluster="b"');
    // a has read the API since the P0 was there, and got its push: it stays open.
    const pausedAt = Date.now();
    const a = await waitFor(
      async () => {
        const g = await gateOf(gates.a.url);
        return g.confirmedAt !== null && Date.parse(g.confirmedAt) > pausedAt && g.sources.push.lastReceivedAt !== null ? g : undefined;
      },
      15_000,
      "a's gate to poll after the P0 and receive its webhook",
    );
    expect(a).toMatchObject({ pauseNonCore: false, stale: false, alerts: [] });

    // A P0 of both clusters: each gate pauses for its own.
    await postAlerts([am], [p0Alert({ cluster: 'a' })]);
    const both = await waitForGate(gates.a.url, true, 15_000, "a's gate to pause for a's P0");
    expect(both.alerts.map((x) => x.reason)).toEqual([expect.stringContaining('cluster="a"')]);
    expect((await gateOf(gates.b.url)).alerts).toHaveLength(1);
  });

  it('refuses a --gate.scope on a label that is not an aggregation label (exit 2)', () => {
    const r = runCli(['serve', '--web.listen-address=127.0.0.1:0', '--gate.scope=cluster=a']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--gate.scope: "cluster" is not one of pack.aggregationLabels (job)');
  });
});
