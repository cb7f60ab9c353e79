// One incident, one page, live: an exporter follows a gateway log through an incident in which the whole
// job drifts with degraded requests (stable and canary cohorts alike), with a dip back to healthy in the
// middle; a real Prometheus evaluates the pack (short windows); two real Alertmanagers 0.25 get every
// alert: one with the committed example config, one with the routing and inhibition the example had
// before (pages grouped by alertname, the P0 muting only the band and degraded warnings). PagerDuty (on
// loopback, keeping incidents by dedup_key as PagerDuty does) counts the pages. The P0, the canary and
// the latency budget all fire; with the committed config that is one page, with the old one the canary
// pages again, as it did on a live run of the old pack (P0 at +2.5 min, canary at +10.5 min).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { renderPack } from '../../../src/pack/render-pack.js';
import { ZeroPlaneStream } from '../../helpers/zero-plane-stream.js';
import { loopbackAlertmanager, pagedAlerts, startSink, type AmConfig, type Sink } from '../../helpers/alertmanager-sink.js';
import { requireBinary } from '../../helpers/binaries.js';
import { startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { freePort, startDaemon, startPrometheus, type Daemon } from '../../helpers/processes.js';
import { tempDir } from '../../helpers/temp-dir.js';

const EXAMPLE_AM = fileURLToPath(new URL('../../../alerts/alertmanager.example.yml', import.meta.url));

/**
 * The pack in seconds instead of minutes, in the same proportions: the P0 waits 2s, the band and degraded
 * warnings 3s, the canary 6s (longer than the P0, as 10m is); the 10s-window alerts keep firing 20s.
 */
const PACK = parseConfig(
  [
    'pack:',
    '  rateWindow: 10s',
    '  evaluationInterval: 1s',
    '  keepFiringFor: 20s',
    '  for: { p0: 2s, driftOutOfBand: 3s, degraded: 3s, canaryRollback: 6s, hitRateLow: 6s }',
    'alerts:',
    '  minRequests: 50',
    'slos:',
    '  period: 1h',
    '  page: [{ factor: 14.4, long: 30s, short: 10s }]',
    '  ticket: [{ factor: 1, long: 60s, short: 20s }]',
    '',
  ].join('\n'),
  'one-page-live.yml',
);

const P0 = 'ZeroPlaneP0DriftWithDegraded';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let dir: string;
let log: string;
let exporter: ServeProcess;
let prometheus: Daemon;
let promUrl: string;
const alertmanagers: Daemon[] = [];
let committed: Sink;
let control: Sink;
let traffic: ZeroPlaneStream;

async function query(q: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
  const res = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(q)}`, { signal: AbortSignal.timeout(5_000) });
  return ((await res.json()) as { data: { result: { metric: Record<string, string>; value: [number, string] }[] } }).data.result;
}

async function startAlertmanager(sink: Sink, edit?: Parameters<typeof loopbackAlertmanager>[1]['edit']): Promise<string> {
  const amDir = tempDir('zp-one-page-am-');
  const file = join(amDir, 'alertmanager.yml');
  writeFileSync(file, loopbackAlertmanager(readFileSync(EXAMPLE_AM, 'utf8'), { dir: amDir, sink, groupWait: '0s', groupInterval: '2s', ...(edit ? { edit } : {}) }));
  const port = await freePort();
  alertmanagers.push(
    await startDaemon(
      requireBinary('prometheus-alertmanager'),
      [`--config.file=${file}`, `--storage.path=${join(amDir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--cluster.listen-address=', '--log.level=warn'],
      `http://127.0.0.1:${port}/-/ready`,
    ),
  );
  return `127.0.0.1:${port}`;
}

/** The first alert of each page (the one that opened the incident). */
const pagedFor = (sink: Sink) => sink.pages().map((e) => pagedAlerts(e)[0]);

/** The example's routing and inhibition before this change (receivers as the committed ones). */
function oldRouting(am: AmConfig): void {
  const [pager, chat, gate] = [am.receivers[0]?.name, am.receivers[1]?.name, am.receivers[2]?.name];
  am.route = {
    receiver: chat,
    group_by: ['alertname', 'job'],
    group_wait: '30s',
    group_interval: '5m',
    repeat_interval: '12h',
    routes: [
      { matchers: ['priority="P0"'], receiver: pager, group_wait: '10s', repeat_interval: '1h', continue: true },
      { matchers: ['priority="P0"'], receiver: gate, group_by: ['alertname', 'job'], group_wait: '0s', group_interval: '10s', repeat_interval: '5m' },
      { matchers: ['severity="critical"'], receiver: pager, group_wait: '10s', repeat_interval: '1h' },
      { matchers: ['severity="warning"'], receiver: chat },
    ],
  };
  am.inhibit_rules = [
    {
      source_matchers: [`alertname="${P0}"`],
      target_matchers: ['severity="warning"', 'alertname=~"ZeroPlaneP99DriftOutOfBand|ZeroPlaneDegradedRequests"'],
      equal: ['job'],
    },
  ];
}
/** Alerts that fired at any point of the last `range`. */
const firedDuring = async (range: string) => new Set((await query(`max_over_time(ALERTS{alertstate="firing"}[${range}])`)).map((s) => s.metric.alertname));

beforeAll(async () => {
  const promBin = requireBinary('prometheus');
  dir = tempDir('zp-one-page-');
  log = join(dir, 'gateway.log');
  traffic = new ZeroPlaneStream(log, { slow: (i) => i % 2 === 0, cohort: (i) => (i < 4 ? 'canary' : 'stable') });
  writeFileSync(log, '');
  exporter = await startServe([log]);
  committed = await startSink();
  control = await startSink();
  const targets = [await startAlertmanager(committed), await startAlertmanager(control, oldRouting)];
  const started = await startPrometheus(promBin, {
    dir,
    rules: renderPack(PACK).get('zero-plane.rules.yml') as string,
    scrapeTarget: exporter.url.replace('http://', ''),
    alertmanager: targets,
  });
  promUrl = started.url;
  prometheus = started.daemon;
}, 60_000);

afterAll(async () => {
  traffic?.stop();
  await Promise.allSettled([prometheus?.stop(), exporter?.stop('SIGKILL'), ...alertmanagers.map((a) => a.stop())]);
  await Promise.allSettled([committed?.close(), control?.close()]);
});

describe('one incident, one page (live Prometheus and Alertmanager 0.25)', () => {
  it('the P0, the canary and the latency budget fire; the committed config pages once, through a dip, and the old one pages for the canary again', async () => {
    traffic.start('healthy');
    await waitFor(async () => ((await query('zero_plane:hit_rate:ratio_rate10s')).length === 1 ? true : undefined), 20_000, 'the rules to record');
    await sleep(5_000);
    expect(committed.pagerDuty).toEqual([]);

    traffic.start('drifting');
    // Every page-worthy alert of the incident fires. Which comes first is a race (the burn alert has no
    // `for`, the P0 waits 2 s), on a busy machine either may open the page: the count of pages is the claim.
    await waitFor(
      async () => {
        const fired = await firedDuring('1m');
        return fired.has(P0) && fired.has('ZeroPlaneCanaryRollback') && fired.has('ZeroPlaneLatencyBudgetBurn') ? true : undefined;
      },
      40_000,
      'the P0, the canary rollback and the latency budget burn to fire',
    );
    // A dip: 12 s of healthy traffic empties the 10 s window for a moment, then the incident goes on.
    traffic.start('healthy');
    await sleep(12_000);
    traffic.start('drifting');
    await sleep(8_000);
    traffic.start('healthy');
    // The end: the P0 resolves (10 s window + keep_firing_for 20 s) and PagerDuty is told.
    await waitFor(() => (committed.pagerDuty.some((e) => e.event_action === 'resolve') ? true : undefined), 60_000, 'the P0 to resolve on PagerDuty');

    // Committed config: one page for the job, carrying the P0, resolved once at the end: the dip neither
    // resolved nor re-paged it.
    expect(committed.pages()).toHaveLength(1);
    const incident = committed.pagerDuty.filter((e) => e.dedup_key === committed.pages()[0]?.dedup_key);
    expect(new Set(incident.filter((e) => e.event_action === 'trigger').flatMap(pagedAlerts))).toContain(P0);
    const p0Events = incident.map((e) => e.event_action);
    expect(p0Events.filter((a) => a === 'resolve')).toHaveLength(1);
    expect(p0Events.at(-1)).toBe('resolve');
    // The old routing: the same incident paged for the canary and the latency budget too, each its own
    // PagerDuty incident after the P0's (and the burn alert, with no keep_firing_for, again after the dip).
    await waitFor(() => (pagedFor(control).includes('ZeroPlaneCanaryRollback') ? true : undefined), 10_000, 'the canary page on the old config');
    expect(new Set(pagedFor(control))).toEqual(new Set([P0, 'ZeroPlaneCanaryRollback', 'ZeroPlaneLatencyBudgetBurn']));
  }, 180_000);
});
