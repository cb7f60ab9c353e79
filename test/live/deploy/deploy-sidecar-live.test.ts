// The Kubernetes sidecar example, run for real on 127.0.0.1: the Pod's nginx.conf under Debian's nginx,
// the exporter with the Pod's arguments and config, the log rotator's script, every volume of the Pod a
// directory of a temp dir (the emptyDir the containers share), an upstream that answers like a Zero-Plane
// deployment. A known mix of requests through nginx, with rotations in between, gives exact counts.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { defaultConfig } from '../../../src/config/schema.js';
import { renderDeploy } from '../../../src/deploy/render-deploy.js';
import { requireBinary } from '../../helpers/binaries.js';
import { sample, startCommand, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { freePort, startDaemon, type Daemon } from '../../helpers/processes.js';
import { tempDir } from '../../helpers/temp-dir.js';

interface Container {
  name: string;
  command?: string[];
  args?: string[];
  env?: { name: string; value: string }[];
  volumeMounts: { name: string; mountPath: string }[];
}

const files = renderDeploy(defaultConfig());
const deployment = parseAllDocuments(files.get('kubernetes/gateway-deployment.yaml') as string)[0]?.toJS() as { spec: { template: { spec: { containers: Container[] } } } };
const containers = deployment.spec.template.spec.containers;
const container = (name: string) => containers.find((c) => c.name === name) as Container;

/** What the upstream answers per `x-test-case`: the response headers a Zero-Plane deployment sends. */
const CASES: Record<string, Record<string, string>> = {
  hit: { 'x-anthropic-layer-id': 'zero-plane-v1', 'x-anthropic-delay-profile': 'warmup=hit, degraded=?0, mode=balanced' },
  miss: { 'x-anthropic-layer-id': 'zero-plane-v1', 'x-anthropic-delay-profile': 'warmup=miss, degraded=?0, mode=balanced' },
  degraded: { 'x-anthropic-layer-id': 'zero-plane-v2', 'x-anthropic-delay-profile': 'warmup=hit, degraded=?1, mode=strict' },
  cached: { 'x-anthropic-layer-id': 'zero-plane-v1', 'x-anthropic-delay-profile': 'warmup=hit', 'x-anthropic-cached': 'true' },
  fallback: { 'x-anthropic-downgrade-reason': 'context_too_long' },
};
/** 60 requests: 36 warm hits, 8 misses, 6 degraded, 4 cached, 6 fallbacks. */
const MIX = [...Array<string>(36).fill('hit'), ...Array<string>(8).fill('miss'), ...Array<string>(6).fill('degraded'), ...Array<string>(4).fill('cached'), ...Array<string>(6).fill('fallback')];

const dir = tempDir('zp-sidecar-');
let upstream: Server;
let nginx: Daemon;
let exporter: ServeProcess;
let rotator: ReturnType<typeof spawn>;
let rotatorOut = '';
let gateway = '';

/** The Pod's paths → this test's directories, longest first so nested paths map whole. */
const mounts = new Map<string, string>();
const mapped = (text: string) => [...mounts].sort(([a], [b]) => b.length - a.length).reduce((t, [from, to]) => t.replaceAll(from, to), text);

beforeAll(async () => {
  const nginxBin = requireBinary('nginx');
  // Run as root here, nginx's workers are nobody: they reopen the log after a rotation, through this directory.
  chmodSync(dir, 0o755);
  for (const c of containers) {
    for (const m of c.volumeMounts) {
      const local = join(dir, m.name);
      mkdirSync(local, { recursive: true });
      // Debian's nginx, started as root here, runs its workers as nobody: they write temp files in nginx-run.
      chmodSync(local, 0o777);
      mounts.set(m.mountPath, local);
    }
  }
  upstream = createServer((req, res) => {
    req.resume();
    const headers = CASES[String(req.headers['x-test-case'])] ?? {};
    res.writeHead(200, { 'content-type': 'application/json', ...headers });
    res.end('{"type":"message"}');
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  const upstreamUrl = `http://127.0.0.1:${(upstream.address() as { port: number }).port}`;

  // The two ConfigMaps, where the Pod mounts them.
  const nginxPort = await freePort();
  const conf = mapped(files.get('kubernetes/config/nginx.conf') as string)
    .replace('listen 8080;', `listen 127.0.0.1:${nginxPort};`)
    .replace(`proxy_pass ${defaultConfig().deploy.kubernetes.upstream};`, `proxy_pass ${upstreamUrl};`);
  writeFileSync(join(mounts.get('/etc/nginx/zero-plane') as string, 'nginx.conf'), conf);
  writeFileSync(join(mounts.get('/etc/zero-plane-exporter') as string, 'zero-plane.yml'), mapped(files.get('kubernetes/config/zero-plane.yml') as string));

  const n = container('nginx');
  gateway = `http://127.0.0.1:${nginxPort}`;
  nginx = await startDaemon(nginxBin, (n.args ?? []).map(mapped), `${gateway}/healthz`);

  const e = container('zero-plane-exporter');
  // Loopback, free ports: the metrics port and the probe listener's.
  const args = (e.args ?? [])
    .map(mapped)
    .map((a) => (a.startsWith('--web.listen-address=') ? '--web.listen-address=127.0.0.1:0' : a.startsWith('--web.probe-listen-address=') ? '--web.probe-listen-address=127.0.0.1:0' : a));
  exporter = await startCommand('serve', args);

  const r = container('log-rotator');
  const env = Object.fromEntries((r.env ?? []).map((v) => [v.name, v.value]));
  expect(env.ROTATE_BYTES).toBe(String(defaultConfig().deploy.kubernetes.logRotateBytes));
  // A small size and a short check, so this test's 60 lines rotate a few times.
  rotator = spawn((r.command ?? [])[0] as string, (r.command ?? []).slice(1).map(mapped), {
    env: { PATH: process.env.PATH ?? '', ROTATE_BYTES: '6000', ROTATE_CHECK_SECONDS: '0.2' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  rotator.stdout?.on('data', (c: Buffer) => (rotatorOut += c.toString()));
  rotator.stderr?.on('data', (c: Buffer) => (rotatorOut += c.toString()));
}, 30_000);

afterAll(async () => {
  rotator?.kill('SIGKILL');
  if (exporter !== undefined) expect(await exporter.stop()).toBe(0);
  await nginx?.stop();
  await new Promise<void>((resolve) => (upstream === undefined ? resolve() : upstream.close(() => resolve())));
});

describe('the sidecar Pod, run on 127.0.0.1 with a temp dir as its emptyDir', () => {
  it('counts a known mix of requests through nginx exactly, across log rotations', async () => {
    const metrics = async () => (await fetch(`${exporter.url}/metrics`)).text();
    for (let i = 0; i < MIX.length; i++) {
      const r = await fetch(`${gateway}/v1/messages`, {
        method: 'POST',
        headers: { 'x-test-case': MIX[i] as string, 'x-model': 'claude-test', 'x-anthropic-experimental': 'zero-plane-2024', 'content-type': 'application/json' },
        body: '{"messages":[]}',
      });
      expect(r.status).toBe(200);
      await r.text();
      // Batches of 12 with a pause: the rotator (checking every 0.2 s) renames the log in between.
      if (i % 12 === 11) await new Promise((resolve) => setTimeout(resolve, 700));
    }
    const total = (text: string) =>
      [...text.matchAll(/^zero_plane_requests_total\{[^}]*\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
    const text = await waitFor(async () => {
      const t = await metrics();
      return total(t) >= MIX.length ? t : undefined;
    }, 15_000, 'all 60 requests counted').catch(async (err: Error) => {
      throw new Error(`${err.message}\nrotator: ${rotatorOut}\nexporter: ${JSON.stringify(exporter.logs.slice(-8))}\nnginx: ${nginx.output().slice(-2000)}\nmetrics: ${(await metrics()).split('\n').filter((l) => l.startsWith('zero_plane_requests_total') || l.startsWith('zero_plane_exporter_')).join('\n')}`);
    });
    // Counted once each, also after a second look (nothing read twice after a rotation).
    await new Promise((resolve) => setTimeout(resolve, 800));
    const after = await metrics();
    expect(total(after)).toBe(60);
    expect(total(text)).toBe(60);
    const labels = 'model="claude-test",route="/v1/messages",cohort=""';
    expect(sample(after, `zero_plane_requests_total{hit="true",status_class="2xx",${labels}}`)).toBe(54);
    expect(sample(after, `zero_plane_requests_total{hit="false",status_class="2xx",${labels}}`)).toBe(6);
    expect(sample(after, `zero_plane_degraded_requests_total{${labels}}`)).toBe(6);
    expect(sample(after, 'zero_plane_warmup_total{outcome="hit",model="claude-test"}')).toBe(46);
    expect(sample(after, 'zero_plane_warmup_total{outcome="miss",model="claude-test"}')).toBe(8);
    expect(sample(after, 'zero_plane_cached_responses_total{model="claude-test",route="/v1/messages"}')).toBe(4);
    expect(sample(after, 'zero_plane_downgrades_total{reason="context_too_long"}')).toBe(6);
    expect(sample(after, 'zero_plane_opt_in_header_total{state="valid",defect=""}')).toBe(60);
    expect(after).not.toMatch(/^zero_plane_exporter_parse_errors_total\{[^}]*\} [1-9]/m);
    // The log did rotate, by rename, and the exporter followed each rotation.
    expect(rotatorOut).toMatch(/rotated .*llm\.jsonl at \d+ bytes/);
    const rotations = [...after.matchAll(/^zero_plane_exporter_file_rotations_total\{[^}]*\} (\d+)$/gm)].reduce((s, m) => s + Number(m[1]), 0);
    expect(rotations).toBeGreaterThanOrEqual(1);
    expect((await fetch(`${exporter.url}/-/ready`)).status).toBe(200);
    // The liveness probe's port (the probe listener the Pod's args start) answers /-/healthy.
    const probeAddress = (exporter.logs.find((l) => l.msg === 'serving') as { probeAddress?: string }).probeAddress;
    expect(probeAddress).toMatch(/^127\.0\.0\.1:\d+$/);
    expect((await fetch(`http://${probeAddress}/-/healthy`)).status).toBe(200);
    // nginx wrote docs/gateways.md's format: the upstream's own time is there, a number, for every proxied line.
    const logDir = mounts.get('/var/log/zero-plane') as string;
    const logged = ['llm.jsonl.1', 'llm.jsonl'].flatMap((f) => (existsSync(join(logDir, f)) ? readFileSync(join(logDir, f), 'utf8').split('\n').filter(Boolean) : []));
    expect(logged.length).toBeGreaterThan(0);
    for (const text of logged) expect((JSON.parse(text) as Record<string, string>).upstream_response_time, text).toMatch(/^\d+\.\d{3}$/);
  });
});
