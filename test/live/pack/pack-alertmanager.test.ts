// The example Alertmanager config routes and inhibits as the pack promises (SPEC §7): amtool resolves the
// receivers of every alert offline, and a real Alertmanager 0.25 on loopback shows the P0 muting exactly
// what it subsumes, for its own aggregation group only, for the default config and for
// aggregationLabels [cluster, namespace, job].
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseConfig } from '../../../src/config/load.js';
import { defaultConfig, type Config } from '../../../src/config/schema.js';
import { receivers } from '../../../src/pack/alertmanager-example.js';
import { renderPack } from '../../../src/pack/render-pack.js';
import { loopbackAlertmanager, startSink, type Sink } from '../../helpers/alertmanager-sink.js';
import { requireBinary } from '../../helpers/binaries.js';
import { freePort, startDaemon, type Daemon } from '../../helpers/processes.js';
import { tempDir } from '../../helpers/temp-dir.js';

const EXAMPLE = fileURLToPath(new URL('../../../alerts/alertmanager.example.yml', import.meta.url));
const RULES = fileURLToPath(new URL('../../../alerts/zero-plane.rules.yml', import.meta.url));
const KUBE = parseConfig('pack:\n  aggregationLabels: [cluster, namespace, job]\n  selector: \'job=~"llm-gateway.*"\'\n', 'kube.yml');

const P0 = 'ZeroPlaneP0DriftWithDegraded';
const R = receivers(defaultConfig());
const PAGE_AND_GATE = `${R.pager},${R.gate}`;

let amtoolPath: string | undefined;
function amtool(args: string[]) {
  amtoolPath ??= requireBinary('amtool');
  const r = spawnSync(amtoolPath, args, { encoding: 'utf8', timeout: 15_000 });
  return { code: r.status, stdout: r.stdout, out: `${r.stdout}${r.stderr}` };
}

/** `amtool config routes test` against an Alertmanager config file, verifying `expect` (comma-separated, tree order). */
function routesTest(file: string, expect: string, labels: string[]) {
  return amtool(['config', 'routes', 'test', `--config.file=${file}`, `--verify.receivers=${expect}`, ...labels]);
}

describe('example Alertmanager routing (amtool config routes test)', () => {
  const rows: { what: string; labels: string[]; receivers: string }[] = [
    { what: 'the P0 (severity=critical, priority=P0)', labels: [`alertname=${P0}`, 'severity=critical', 'priority=P0', 'job=zp'], receivers: PAGE_AND_GATE },
    { what: 'another critical alert', labels: ['alertname=ZeroPlaneCanaryRollback', 'severity=critical', 'job=zp', 'cohort=canary-7'], receivers: R.pager },
    { what: 'a burn-rate page', labels: ['alertname=ZeroPlaneLatencyBudgetBurn', 'severity=critical', 'slo=latency', 'job=zp'], receivers: R.pager },
    { what: 'a burn-rate ticket', labels: ['alertname=ZeroPlaneLatencyBudgetBurn', 'severity=warning', 'slo=latency', 'job=zp'], receivers: R.chat },
    { what: 'a warning', labels: ['alertname=ZeroPlaneHitRateLow', 'severity=warning', 'job=zp'], receivers: R.chat },
    { what: 'the warm-up early warning (a ticket)', labels: ['alertname=ZeroPlaneWarmupEfficiencySliding', 'severity=warning', 'job=zp'], receivers: R.chat },
    { what: 'the drift early warning (a ticket)', labels: ['alertname=ZeroPlaneP99DriftCreeping', 'severity=warning', 'job=zp'], receivers: R.chat },
    { what: 'an alert without severity (root fallback)', labels: ['alertname=SomethingElse', 'job=zp'], receivers: R.chat },
  ];

  it.each(rows)('$what → $receivers', ({ labels, receivers: expected }) => {
    const r = routesTest(EXAMPLE, expected, labels);
    expect(r.code, r.out).toBe(0);
    expect(r.stdout.trim()).toBe(expected);
    expect(r.out).not.toContain('did not match');
  });

  it('--verify.receivers fails (non-zero) on a wrong expectation: the P0 does not page only', () => {
    const r = routesTest(EXAMPLE, R.pager, [`alertname=${P0}`, 'severity=critical', 'priority=P0', 'job=zp']);
    expect(r.code, r.out).not.toBe(0);
    expect(r.out).toContain('Expected receivers did not match resolved receivers');
    expect(r.stdout).toContain(PAGE_AND_GATE);
  });

  it.each([
    ['the committed example', defaultConfig()],
    ['aggregationLabels [cluster, namespace, job]', KUBE],
  ])('every alert of the rules reaches the receiver its labels promise (%s)', (_name, config) => {
    const files = renderPack(config);
    const dir = tempDir('zp-am-routes-');
    const file = join(dir, 'alertmanager.yml');
    writeFileSync(file, files.get('alertmanager.example.yml') as string);
    const rules = parse(files.get('zero-plane.rules.yml') as string) as { groups: { rules: { alert?: string; labels?: Record<string, string> }[] }[] };
    const alerts = rules.groups.flatMap((g) => g.rules).filter((r) => r.alert !== undefined);
    // 14 of docs/contract.md §7 and the exporter, 8 burn-rate rules (2 SLOs × 4 pairs), 2 early warnings, the probe's fallback.
    expect(alerts.length).toBe(25);
    const group = Object.fromEntries(config.pack.aggregationLabels.map((l) => [l, `zp-${l}`]));
    for (const a of alerts) {
      const labels: Record<string, string> = { ...a.labels, ...group, alertname: a.alert as string };
      const expected = labels.priority === 'P0' ? PAGE_AND_GATE : labels.severity === 'critical' ? R.pager : R.chat;
      const r = routesTest(
        file,
        expected,
        Object.entries(labels).map(([k, v]) => `${k}=${v}`),
      );
      expect(r.code, `${a.alert}: ${r.out}`).toBe(0);
      expect(r.stdout.trim(), a.alert).toBe(expected);
    }
  });
});

// ---------------------------------------------------------------------------------------------------
// Inhibition cannot be tested offline with amtool 0.25: run the real thing on 127.0.0.1.

interface ApiAlert {
  labels: Record<string, string>;
  fingerprint: string;
  status: { state: 'active' | 'suppressed' | 'unprocessed'; inhibitedBy: string[]; silencedBy: string[] };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function runAlertmanager(config: Config, sink: Sink): Promise<{ url: string; daemon: Daemon }> {
  const dir = tempDir('zp-am-');
  const file = join(dir, 'alertmanager.yml');
  writeFileSync(file, loopbackAlertmanager(renderPack(config).get('alertmanager.example.yml') as string, { dir, sink }));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const daemon = await startDaemon(
    requireBinary('prometheus-alertmanager'),
    [`--config.file=${file}`, `--storage.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`, '--cluster.listen-address=', '--log.level=warn'],
    `${url}/-/ready`,
  );
  return { url, daemon };
}

/** Posts alerts (as Prometheus does) and returns each one's state once the inhibitor has settled, keyed by `key`. */
async function postAndSettle(url: string, posted: { labels: Record<string, string> }[], key: (l: Record<string, string>) => string, suppressed: string[]) {
  const startsAt = new Date().toISOString();
  const res = await fetch(`${url}/api/v2/alerts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(posted.map((a) => ({ ...a, annotations: { summary: 'test' }, startsAt }))),
    signal: AbortSignal.timeout(2_000),
  });
  expect(res.status, await res.text()).toBe(200);
  // Bounded poll: the inhibitor picks the sources up asynchronously.
  let alerts: ApiAlert[] = [];
  const deadline = Date.now() + 10_000;
  for (;;) {
    alerts = (await (await fetch(`${url}/api/v2/alerts`, { signal: AbortSignal.timeout(2_000) })).json()) as ApiAlert[];
    const byKey = new Map(alerts.map((a) => [key(a.labels), a]));
    if (alerts.length === posted.length && suppressed.every((k) => byKey.get(k)?.status.state === 'suppressed')) break;
    if (Date.now() > deadline) break;
    await sleep(200);
  }
  return new Map(alerts.map((a) => [key(a.labels), a]));
}

describe('P0 inhibition on a real Alertmanager (loopback)', () => {
  let sink: Sink;
  const daemons: Daemon[] = [];

  beforeAll(async () => {
    sink = await startSink();
  });

  afterAll(async () => {
    await Promise.allSettled(daemons.map((d) => d.stop()));
    await sink?.close();
  }, 15_000);

  it("the P0 mutes its own job's drift, degraded, canary and latency-budget alerts, nothing else; a burn page mutes its ticket", async () => {
    const am = await runAlertmanager(defaultConfig(), sink);
    daemons.push(am.daemon);
    const alert = (alertname: string, job: string, labels: Record<string, string>) => ({ labels: { alertname, job, ...labels } });
    const warning = { severity: 'warning' };
    const posted = [
      alert(P0, 'zp-a', { severity: 'critical', priority: 'P0' }),
      alert('ZeroPlaneP99DriftOutOfBand', 'zp-a', warning),
      alert('ZeroPlaneDegradedRequests', 'zp-a', warning),
      alert('ZeroPlaneCanaryRollback', 'zp-a', { severity: 'critical', cohort: 'canary' }),
      alert('ZeroPlaneLatencyBudgetBurn', 'zp-a', { severity: 'critical', slo: 'latency', long_window: '1h', short_window: '5m' }),
      alert('ZeroPlaneP99DriftOutOfBand', 'zp-b', warning),
      alert('ZeroPlaneCanaryRollback', 'zp-b', { severity: 'critical', cohort: 'canary' }),
      alert('ZeroPlaneHitRateLow', 'zp-a', warning),
      alert('ZeroPlaneHitRateBudgetBurn', 'zp-a', { severity: 'critical', slo: 'hit-rate', long_window: '1h', short_window: '5m' }),
      alert('ZeroPlaneHitRateBudgetBurn', 'zp-a', { severity: 'warning', slo: 'hit-rate', long_window: '1d', short_window: '2h' }),
      alert('ZeroPlaneHitRateBudgetBurn', 'zp-b', { severity: 'warning', slo: 'hit-rate', long_window: '1d', short_window: '2h' }),
    ];
    const key = (l: Record<string, string>) => `${l.alertname}/${l.job}${l.long_window ? `/${l.long_window}` : ''}`;
    const suppressed = [
      'ZeroPlaneP99DriftOutOfBand/zp-a',
      'ZeroPlaneDegradedRequests/zp-a',
      'ZeroPlaneCanaryRollback/zp-a',
      'ZeroPlaneLatencyBudgetBurn/zp-a/1h',
      'ZeroPlaneHitRateBudgetBurn/zp-a/1d',
    ];
    const byKey = await postAndSettle(am.url, posted, key, suppressed);
    const state = Object.fromEntries([...byKey].map(([k, a]) => [k, a.status.state]));
    expect(state).toEqual({
      [`${P0}/zp-a`]: 'active',
      'ZeroPlaneP99DriftOutOfBand/zp-a': 'suppressed',
      'ZeroPlaneDegradedRequests/zp-a': 'suppressed',
      'ZeroPlaneCanaryRollback/zp-a': 'suppressed',
      'ZeroPlaneLatencyBudgetBurn/zp-a/1h': 'suppressed',
      'ZeroPlaneP99DriftOutOfBand/zp-b': 'active',
      'ZeroPlaneCanaryRollback/zp-b': 'active',
      'ZeroPlaneHitRateLow/zp-a': 'active',
      'ZeroPlaneHitRateBudgetBurn/zp-a/1h': 'active',
      'ZeroPlaneHitRateBudgetBurn/zp-a/1d': 'suppressed',
      'ZeroPlaneHitRateBudgetBurn/zp-b/1d': 'active',
    });
    const p0 = byKey.get(`${P0}/zp-a`) as ApiAlert;
    for (const k of suppressed.slice(0, 4)) expect(byKey.get(k)?.status.inhibitedBy, k).toEqual([p0.fingerprint]);
    expect(byKey.get('ZeroPlaneHitRateBudgetBurn/zp-a/1d')?.status.inhibitedBy).toEqual([byKey.get('ZeroPlaneHitRateBudgetBurn/zp-a/1h')?.fingerprint]);
  }, 30_000);

  it("aggregationLabels [cluster, namespace, job]: the P0 in one cluster mutes that cluster's alerts only, for the same job", async () => {
    const am = await runAlertmanager(KUBE, sink);
    daemons.push(am.daemon);
    const at = (cluster: string, alertname: string, labels: Record<string, string>) => ({
      labels: { alertname, cluster, namespace: 'llm', job: 'llm-gateway', ...labels },
    });
    const posted = [
      at('eu', P0, { severity: 'critical', priority: 'P0' }),
      at('eu', 'ZeroPlaneDegradedRequests', { severity: 'warning' }),
      at('eu', 'ZeroPlaneCanaryRollback', { severity: 'critical', cohort: 'canary' }),
      at('us', 'ZeroPlaneDegradedRequests', { severity: 'warning' }),
      at('us', 'ZeroPlaneCanaryRollback', { severity: 'critical', cohort: 'canary' }),
    ];
    const key = (l: Record<string, string>) => `${l.alertname}/${l.cluster}`;
    const byKey = await postAndSettle(am.url, posted, key, ['ZeroPlaneDegradedRequests/eu', 'ZeroPlaneCanaryRollback/eu']);
    expect(Object.fromEntries([...byKey].map(([k, a]) => [k, a.status.state]))).toEqual({
      [`${P0}/eu`]: 'active',
      'ZeroPlaneDegradedRequests/eu': 'suppressed',
      'ZeroPlaneCanaryRollback/eu': 'suppressed',
      'ZeroPlaneDegradedRequests/us': 'active',
      'ZeroPlaneCanaryRollback/us': 'active',
    });
  }, 30_000);

  it('no exporter target at all (Absent) mutes Gone of the groups its labels cover: all of the default job; with a regex selector none (absent() carries no job)', async () => {
    // absent(up{job="zero-plane-exporter"}) gives {job="zero-plane-exporter"}; Gone is per job.
    const am = await runAlertmanager(defaultConfig(), sink);
    daemons.push(am.daemon);
    const posted = [
      { labels: { alertname: 'ZeroPlaneExporterAbsent', severity: 'warning', job: 'zero-plane-exporter' } },
      { labels: { alertname: 'ZeroPlaneExporterGone', severity: 'warning', job: 'zero-plane-exporter' } },
      { labels: { alertname: 'ZeroPlaneExporterGone', severity: 'warning', job: 'other-exporter' } },
    ];
    const key = (l: Record<string, string>) => `${l.alertname}/${l.job}`;
    const byKey = await postAndSettle(am.url, posted, key, ['ZeroPlaneExporterGone/zero-plane-exporter']);
    expect(Object.fromEntries([...byKey].map(([k, a]) => [k, a.status.state]))).toEqual({
      'ZeroPlaneExporterAbsent/zero-plane-exporter': 'active',
      'ZeroPlaneExporterGone/zero-plane-exporter': 'suppressed',
      'ZeroPlaneExporterGone/other-exporter': 'active',
    });
    expect(byKey.get('ZeroPlaneExporterGone/zero-plane-exporter')?.status.inhibitedBy).toEqual([byKey.get('ZeroPlaneExporterAbsent/zero-plane-exporter')?.fingerprint]);

    // KUBE's selector is job=~"llm-gateway.*": absent() has no label to say which groups it covers, so
    // equal: [cluster, namespace, job] mutes none (both fire) rather than another cluster's Gone.
    const kube = await runAlertmanager(KUBE, sink);
    daemons.push(kube.daemon);
    // A P0 muting its degraded warning is the sign the inhibitor has settled on these alerts.
    const kubePosted: { labels: Record<string, string> }[] = [
      { labels: { alertname: 'ZeroPlaneExporterAbsent', severity: 'warning' } },
      { labels: { alertname: 'ZeroPlaneExporterGone', severity: 'warning', cluster: 'eu', namespace: 'llm', job: 'llm-gateway' } },
      { labels: { alertname: P0, severity: 'critical', priority: 'P0', cluster: 'us', namespace: 'llm', job: 'llm-gateway' } },
      { labels: { alertname: 'ZeroPlaneDegradedRequests', severity: 'warning', cluster: 'us', namespace: 'llm', job: 'llm-gateway' } },
    ];
    const kubeByKey = await postAndSettle(kube.url, kubePosted, (l) => `${l.alertname}/${l.cluster ?? ''}`, ['ZeroPlaneDegradedRequests/us']);
    expect(Object.fromEntries([...kubeByKey].map(([k, a]) => [k, a.status.state]))).toEqual({
      'ZeroPlaneExporterAbsent/': 'active',
      'ZeroPlaneExporterGone/eu': 'active',
      [`${P0}/us`]: 'active',
      'ZeroPlaneDegradedRequests/us': 'suppressed',
    });
  }, 30_000);
});

it('the committed example is the one these tests read', () => {
  expect(readFileSync(EXAMPLE, 'utf8')).toBe(renderPack(defaultConfig()).get('alertmanager.example.yml'));
  expect(readFileSync(RULES, 'utf8')).toBe(renderPack(defaultConfig()).get('zero-plane.rules.yml'));
});
