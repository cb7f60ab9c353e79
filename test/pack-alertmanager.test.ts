// The example Alertmanager config routes and inhibits as the pack promises (SPEC §7): amtool resolves the
// receivers of each priority/severity offline, and a real Alertmanager 0.25 on loopback shows the P0
// muting exactly the warnings it subsumes, for its own job only.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { tempDir } from './helpers/temp-dir.js';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { requireBinary } from './helpers/binaries.js';
import { freePort } from './helpers/processes.js';

const EXAMPLE = fileURLToPath(new URL('../alerts/alertmanager.example.yml', import.meta.url));
const RULES = fileURLToPath(new URL('../alerts/zero-plane.rules.yml', import.meta.url));

const P0 = 'ZeroPlaneP0DriftWithDegraded';

let amtoolPath: string | undefined;
function amtool(args: string[]) {
  amtoolPath ??= requireBinary('amtool');
  const r = spawnSync(amtoolPath, args, { encoding: 'utf8', timeout: 15_000 });
  return { code: r.status, stdout: r.stdout, out: `${r.stdout}${r.stderr}` };
}

/** `amtool config routes test` against the committed example, verifying `expect` (comma-separated, tree order). */
function routesTest(expect: string, labels: string[]) {
  return amtool(['config', 'routes', 'test', `--config.file=${EXAMPLE}`, `--verify.receivers=${expect}`, ...labels]);
}

describe('example Alertmanager routing (amtool config routes test)', () => {
  const rows: { what: string; labels: string[]; receivers: string }[] = [
    { what: 'the P0 (severity=critical, priority=P0)', labels: [`alertname=${P0}`, 'severity=critical', 'priority=P0', 'job=zp'], receivers: 'pager,load-shedding-gate' },
    { what: 'another critical alert', labels: ['alertname=ZeroPlaneCanaryRollback', 'severity=critical', 'job=zp', 'cohort=canary-7'], receivers: 'pager' },
    { what: 'a warning', labels: ['alertname=ZeroPlaneHitRateLow', 'severity=warning', 'job=zp'], receivers: 'ticket' },
    { what: 'a warning the P0 subsumes', labels: ['alertname=ZeroPlaneDegradedRequests', 'severity=warning', 'job=zp'], receivers: 'ticket' },
    { what: 'an alert without severity (root fallback)', labels: ['alertname=SomethingElse', 'job=zp'], receivers: 'ticket' },
  ];

  it.each(rows)('$what → $receivers', ({ labels, receivers }) => {
    const r = routesTest(receivers, labels);
    expect(r.code, r.out).toBe(0);
    expect(r.stdout.trim()).toBe(receivers);
    expect(r.out).not.toContain('did not match');
  });

  it('--verify.receivers fails (non-zero) on a wrong expectation: the P0 does not page only', () => {
    const r = routesTest('pager', [`alertname=${P0}`, 'severity=critical', 'priority=P0', 'job=zp']);
    expect(r.code, r.out).not.toBe(0);
    expect(r.out).toContain('Expected receivers did not match resolved receivers');
    expect(r.stdout).toContain('pager,load-shedding-gate');
  });

  it('every alert of the committed rules reaches the receiver its labels promise', () => {
    const rules = parse(readFileSync(RULES, 'utf8')) as { groups: { rules: { alert?: string; labels?: Record<string, string> }[] }[] };
    const alerts = rules.groups.flatMap((g) => g.rules).filter((r) => r.alert !== undefined);
    expect(alerts.length).toBeGreaterThan(0);
    for (const a of alerts) {
      const labels: Record<string, string> = { ...a.labels, alertname: a.alert as string, job: 'zp' };
      const receivers = labels.priority === 'P0' ? 'pager,load-shedding-gate' : labels.severity === 'critical' ? 'pager' : 'ticket';
      const r = routesTest(receivers, Object.entries(labels).map(([k, v]) => `${k}=${v}`));
      expect(r.code, `${a.alert}: ${r.out}`).toBe(0);
      expect(r.stdout.trim(), a.alert).toBe(receivers);
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

let am: ChildProcess | undefined;
let amOutput = '';
let amUrl = '';
let dir: string | undefined;

async function stopAlertmanager(): Promise<void> {
  const child = am;
  am = undefined;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(killer);
}

/** The committed example with every webhook sent to 127.0.0.1:9 (refused at once, no DNS lookup). */
function loopbackCopy(): string {
  const config = parse(readFileSync(EXAMPLE, 'utf8')) as { receivers: { name: string; webhook_configs?: { url: string }[] }[] };
  let rewritten = 0;
  for (const receiver of config.receivers) {
    for (const hook of receiver.webhook_configs ?? []) {
      hook.url = 'http://127.0.0.1:9/';
      rewritten++;
    }
  }
  expect(rewritten).toBe(3);
  return stringify(config);
}

async function waitReady(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!am || am.exitCode !== null) throw new Error(`prometheus-alertmanager exited early:\n${amOutput}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`prometheus-alertmanager not ready at ${url} within ${timeoutMs} ms:\n${amOutput}`);
    await sleep(100);
  }
}

async function getAlerts(): Promise<ApiAlert[]> {
  const res = await fetch(`${amUrl}/api/v2/alerts`, { signal: AbortSignal.timeout(2_000) });
  expect(res.status).toBe(200);
  return (await res.json()) as ApiAlert[];
}

describe('P0 inhibition on a real Alertmanager (loopback)', () => {
  beforeAll(async () => {
    const bin = requireBinary('prometheus-alertmanager');
    dir = tempDir('zp-am-');
    const configFile = join(dir, 'alertmanager.yml');
    writeFileSync(configFile, loopbackCopy());
    const port = await freePort();
    amUrl = `http://127.0.0.1:${port}`;
    am = spawn(
      bin,
      [
        `--config.file=${configFile}`,
        `--storage.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--cluster.listen-address=', // empty: no gossip listener
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    am.stdout?.on('data', (c: Buffer) => (amOutput += c.toString()));
    am.stderr?.on('data', (c: Buffer) => (amOutput += c.toString()));
    try {
      await waitReady(`${amUrl}/-/ready`, 15_000);
    } catch (err) {
      await stopAlertmanager();
      throw err;
    }
  }, 25_000);

  afterAll(async () => {
    await stopAlertmanager();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 10_000);

  it('the P0 suppresses its own job\'s drift and degraded warnings, nothing else', async () => {
    const startsAt = new Date().toISOString();
    const alert = (alertname: string, job: string, labels: Record<string, string>) => ({
      labels: { alertname, job, ...labels },
      annotations: { summary: `${alertname} for ${job} (test)` },
      startsAt,
    });
    const warning = { severity: 'warning' };
    const posted = [
      alert(P0, 'zp-a', { severity: 'critical', priority: 'P0' }),
      alert('ZeroPlaneP99DriftOutOfBand', 'zp-a', warning),
      alert('ZeroPlaneDegradedRequests', 'zp-a', warning),
      alert('ZeroPlaneP99DriftOutOfBand', 'zp-b', warning),
      alert('ZeroPlaneDegradedRequests', 'zp-b', warning),
      alert('ZeroPlaneHitRateLow', 'zp-a', warning),
    ];
    const res = await fetch(`${amUrl}/api/v2/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(posted),
      signal: AbortSignal.timeout(2_000),
    });
    expect(res.status, await res.text()).toBe(200);

    const key = (a: { labels: Record<string, string> }) => `${a.labels.alertname}/${a.labels.job}`;
    const subsumed = ['ZeroPlaneP99DriftOutOfBand/zp-a', 'ZeroPlaneDegradedRequests/zp-a'];
    // Bounded poll: the inhibitor picks the P0 up asynchronously.
    let alerts: ApiAlert[] = [];
    const deadline = Date.now() + 10_000;
    for (;;) {
      alerts = await getAlerts();
      const byKey = new Map(alerts.map((a) => [key(a), a]));
      if (alerts.length === posted.length && subsumed.every((k) => byKey.get(k)?.status.state === 'suppressed')) break;
      if (Date.now() > deadline) break;
      await sleep(200);
    }
    const byKey = new Map(alerts.map((a) => [key(a), a]));
    const state = Object.fromEntries([...byKey].map(([k, a]) => [k, a.status.state]));
    expect(state, amOutput).toEqual({
      [`${P0}/zp-a`]: 'active',
      'ZeroPlaneP99DriftOutOfBand/zp-a': 'suppressed',
      'ZeroPlaneDegradedRequests/zp-a': 'suppressed',
      'ZeroPlaneP99DriftOutOfBand/zp-b': 'active',
      'ZeroPlaneDegradedRequests/zp-b': 'active',
      'ZeroPlaneHitRateLow/zp-a': 'active',
    });
    const p0 = byKey.get(`${P0}/zp-a`) as ApiAlert;
    for (const k of subsumed) {
      expect(byKey.get(k)?.status.inhibitedBy, k).toEqual([p0.fingerprint]);
      expect(byKey.get(k)?.status.silencedBy, k).toEqual([]);
    }
    for (const k of [`${P0}/zp-a`, 'ZeroPlaneP99DriftOutOfBand/zp-b', 'ZeroPlaneDegradedRequests/zp-b', 'ZeroPlaneHitRateLow/zp-a']) {
      expect(byKey.get(k)?.status.inhibitedBy, k).toEqual([]);
    }
  }, 20_000);
});
