// "Done when", live: an application using the real Anthropic SDK, with no gateway, adds instrumentFetch
// (batches to an exporter's ingest) and gateClient. The simulator's fault makes the P0 real: exporter →
// Prometheus (generated rules, 10 s windows) → Alertmanager (the example routing) → the exporter's gate →
// gateClient, which skips the application's non-core calls until the P0 resolves.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gateClient, instrumentFetch, metricsText, type GateClient, type InstrumentedFetch } from '../../../src/client/index.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulate/simulator.js';
import { promQuery, startAlertChain, type AlertChain } from '../../helpers/alert-chain.js';
import { startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

let simulator: RunningSimulator;
let exporter: ServeProcess;
let chain: AlertChain;
let zp: InstrumentedFetch;
let gate: GateClient;
let running = true;
const traffic: Promise<void>[] = [];
const app = { coreCalls: 0, nonCoreCalls: 0, nonCoreSkipped: 0 };

/** The application: core calls always, a non-core one (a summary, say) only when the gate allows it. */
async function appLoop(client: Anthropic): Promise<void> {
  let n = 0;
  while (running) {
    n++;
    await client.messages.create(
      { model: 'claude-sonnet', max_tokens: 32, messages: [{ role: 'user', content: `core ${n} ${Math.random()}` }] },
      { headers: { 'x-anthropic-experimental': 'zero-plane-2024' } },
    );
    app.coreCalls++;
    if (await gate.allows('non-core')) {
      app.nonCoreCalls++; // counted when decided: a call allowed just before the pause may still be in flight
      await client.messages.create(
        { model: 'claude-haiku', max_tokens: 32, messages: [{ role: 'user', content: `summary ${n} ${Math.random()}` }] },
        { headers: { 'x-anthropic-experimental': 'zero-plane-2024' } },
      );
    } else {
      app.nonCoreSkipped++;
    }
  }
}

beforeAll(async () => {
  const dir = tempDir('zp-client-chain-');
  const tokenFile = join(dir, 'gate.token');
  writeFileSync(tokenFile, 'client-chain-token\n');
  writeFileSync(join(dir, 'zp.yml'), `gate:\n  bearerTokenFile: ${tokenFile}\ningest:\n  enabled: true\n`);
  exporter = await startServe([`--config.file=${join(dir, 'zp.yml')}`]);
  chain = await startAlertChain({ dir, exporterUrl: exporter.url, gateTokenFile: tokenFile });
  // The layer at 120 ms is far below the ceiling: healthy until the fault.
  simulator = await startSimulator({ seed: 15 });
  zp = instrumentFetch(fetch, { optIn: 'reject', to: { ingest: { url: exporter.url, flushInterval: 200 } }, warn: () => undefined });
  gate = gateClient({ url: exporter.url, pollInterval: 250, failOpen: true, warn: () => undefined });
  const client = new Anthropic({ apiKey: 'sk-test', baseURL: simulator.url, fetch: zp, maxRetries: 0 });
  for (let i = 0; i < 3; i++) traffic.push(appLoop(client));
}, 60_000);

afterAll(async () => {
  running = false;
  await Promise.allSettled(traffic);
  gate?.close();
  await zp?.close();
  await simulator?.close();
  await Promise.allSettled([chain?.stop(), exporter?.stop()]);
});

describe('an SDK application with instrumentFetch and gateClient, behind the live alert chain', () => {
  it('sends non-core calls while healthy, skips them during the P0, and resumes after it', async () => {
    // The chain sees the application's calls (through ingest) and the gate stays open.
    await waitFor(
      async () => {
        const r = await promQuery(chain.promUrl, 'zero_plane:hit_rate:ratio_rate10s');
        return r.length === 1 && Number(r[0]?.value[1]) === 1 ? true : undefined;
      },
      30_000,
      'Prometheus to record the application’s hit rate',
    );
    expect(app.nonCoreSkipped).toBe(0);
    expect(app.nonCoreCalls).toBeGreaterThan(0);

    // The layer drifts (+100 %: about 240 ms, above the 194.25 ms ceiling) and degrades: the P0.
    simulator.faults.set({ latencyDriftRatio: 1, degradedRate: 0.3 });
    await waitFor(async () => ((await gate.decide('non-core')).reason === 'paused' ? true : undefined), 45_000, 'the P0 to reach the gate client');
    const skippedAt = app.nonCoreSkipped;
    await waitFor(() => (app.nonCoreSkipped > skippedAt ? true : undefined), 10_000, 'a non-core call to be skipped');
    const sentDuringPause = app.nonCoreCalls;
    const coreDuringPause = app.coreCalls;
    await waitFor(() => (app.coreCalls > coreDuringPause + 5 ? true : undefined), 10_000, 'core calls to go on');
    expect(gate.state().pauseNonCore).toBe(true);
    expect(app.nonCoreCalls).toBe(sentDuringPause);
    const firing = await promQuery(chain.promUrl, 'ALERTS{alertname="ZeroPlaneP0DriftWithDegraded",alertstate="firing"}');
    expect(firing.length).toBe(1);

    simulator.faults.reset();
    await waitFor(async () => ((await gate.decide('non-core')).reason === 'open' ? true : undefined), 60_000, 'the gate to reopen once the P0 resolves');
    const resumedAt = app.nonCoreCalls;
    await waitFor(() => (app.nonCoreCalls > resumedAt ? true : undefined), 10_000, 'non-core calls to resume');

    const text = metricsText([zp, gate]);
    expect(text).toMatch(/^zero_plane_gate_client_decisions_total\{kind="non-core",decision="skipped",reason="paused"\} [1-9]/m);
    expect(text).toMatch(/^zero_plane_client_records_total\{to="ingest",result="dropped"\} 0$/m);
  }, 150_000);
});
