// The parts of a replicated gate, live on loopback: real Alertmanagers (alone, or peers of one HA mesh)
// whose P0 route posts to a webhook URL, exporter replicas (`serve` on fixed ports, so one can be killed
// and restarted behind the balancer) and HAProxy balancing them round-robin, as a Kubernetes Service would.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { requireBinary } from './binaries.js';
import { startCommand, waitFor, type ServeProcess } from './cli-process.js';
import { accepts, freePort, startDaemon, type Daemon } from './processes.js';

export interface Alertmanager {
  url: string;
  daemon: Daemon;
}

/**
 * `count` Alertmanagers 0.25 with one route: the P0 to `webhookUrl` at once (group_wait 0s, group_interval
 * 1s, resolved sent), a repeat only after 1h so the test sees what polls do, not what repeats do. Several
 * form a mesh on loopback (--cluster.listen-address, --cluster.peer), deduplicating notifications.
 */
export async function startAlertmanagers(dir: string, webhookUrl: string, count = 1): Promise<Alertmanager[]> {
  const bin = requireBinary('prometheus-alertmanager');
  const config = join(dir, `alertmanager-${count}.yml`);
  writeFileSync(
    config,
    stringify({
      route: {
        receiver: 'null',
        group_by: ['alertname', 'cluster', 'job'],
        group_wait: '0s',
        group_interval: '1s',
        repeat_interval: '1h',
        routes: [{ matchers: ['priority="P0"'], receiver: 'load-shedding-gate' }],
      },
      receivers: [{ name: 'null' }, { name: 'load-shedding-gate', webhook_configs: [{ url: webhookUrl, send_resolved: true }] }],
    }),
  );
  const webPorts = await Promise.all(Array.from({ length: count }, () => freePort()));
  const clusterPorts = await Promise.all(Array.from({ length: count }, () => freePort()));
  const started: Alertmanager[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const cluster =
        count === 1
          ? ['--cluster.listen-address=']
          : [
              `--cluster.listen-address=127.0.0.1:${clusterPorts[i]}`,
              `--cluster.advertise-address=127.0.0.1:${clusterPorts[i]}`,
              ...clusterPorts.filter((_, j) => j !== i).map((p) => `--cluster.peer=127.0.0.1:${p}`),
              '--cluster.peer-timeout=1s',
              '--cluster.gossip-interval=100ms',
              '--cluster.pushpull-interval=1s',
            ];
      const url = `http://127.0.0.1:${webPorts[i]}`;
      const daemon = await startDaemon(
        bin,
        [`--config.file=${config}`, `--storage.path=${join(dir, `am-${count}-${i}`)}`, `--web.listen-address=127.0.0.1:${webPorts[i]}`, ...cluster],
        `${url}/-/ready`,
      );
      started.push({ url, daemon });
    }
    return started;
  } catch (err) {
    await Promise.allSettled(started.map((a) => a.daemon.stop()));
    throw err;
  }
}

/** A P0 alert as Prometheus posts it to Alertmanager; `endsAt` now resolves it. */
export function p0Alert(labels: Record<string, string>, endsAt?: Date): Record<string, unknown> {
  return {
    labels: { alertname: 'ZeroPlaneP0DriftWithDegraded', job: 'zero-plane-exporter', priority: 'P0', severity: 'critical', ...labels },
    annotations: { summary: 'Zero-Plane p99 above the ceiling with degraded requests' },
    startsAt: '2024-05-14T09:41:26.739Z',
    ...(endsAt === undefined ? {} : { endsAt: endsAt.toISOString() }),
    generatorURL: 'http://prometheus:9090/graph',
  };
}

/** POST /api/v2/alerts to each Alertmanager (Prometheus sends every alert to all of them). */
export async function postAlerts(ams: readonly Alertmanager[], alerts: Record<string, unknown>[]): Promise<void> {
  for (const am of ams) {
    const res = await fetch(`${am.url}/api/v2/alerts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(alerts), signal: AbortSignal.timeout(5_000) });
    if (!res.ok) throw new Error(`${am.url} POST /api/v2/alerts: HTTP ${res.status} ${await res.text()}`);
  }
}

export interface Replica {
  port: number;
  url: string;
  process: ServeProcess;
}

/** `serve` with `configFile` on 127.0.0.1:`port`; resolves once it serves. */
export async function startReplica(port: number, configFile: string): Promise<Replica> {
  const process = await startCommand('serve', [`--web.listen-address=127.0.0.1:${port}`, `--config.file=${configFile}`], 20_000);
  return { port, url: `http://127.0.0.1:${port}`, process };
}

export interface GateAnswer {
  pauseNonCore: boolean;
  stale: boolean;
  sourcesReachable: boolean;
  confirmedAt: string | null;
  scope: Record<string, string>;
  alerts: { fingerprint: string; source: 'api' | 'push'; peer: string; lastSeen: string; reason: string }[];
  sources: { alertmanagers: { url: string; up: boolean; error: string | null }[]; push: { lastReceivedAt: string | null; from: string | null } };
}

export async function gateOf(url: string): Promise<GateAnswer> {
  const res = await fetch(`${url}/api/v1/gate`, { signal: AbortSignal.timeout(2_000) });
  if (!res.ok) throw new Error(`${url}/api/v1/gate: HTTP ${res.status}`);
  return (await res.json()) as GateAnswer;
}

/** Waits (bounded) until `url`'s gate answers pauseNonCore = `paused`, not stale; returns the answer. */
export function waitForGate(url: string, paused: boolean, timeoutMs: number, what: string): Promise<GateAnswer> {
  return waitFor(
    async () => {
      const g = await gateOf(url).catch(() => undefined);
      return g !== undefined && g.pauseNonCore === paused && !g.stale ? g : undefined;
    },
    timeoutMs,
    what,
  );
}

/**
 * HAProxy balancing `ports` round-robin on one frontend. A refused connection (a replica down) is retried
 * on the other (`option redispatch`), as a Service stops sending to a Pod that is not ready.
 */
export async function startBalancer(dir: string, ports: readonly number[]): Promise<{ url: string; stop(): Promise<void> }> {
  const bin = requireBinary('haproxy');
  const port = await freePort();
  const cfg = join(dir, 'balancer.cfg');
  writeFileSync(
    cfg,
    [
      'defaults',
      '  mode http',
      '  timeout connect 1s',
      '  timeout client 10s',
      '  timeout server 10s',
      'frontend gate',
      `  bind 127.0.0.1:${port}`,
      '  default_backend replicas',
      'backend replicas',
      '  balance roundrobin',
      '  option redispatch',
      '  retries 2',
      ...ports.map((p, i) => `  server r${i} 127.0.0.1:${p}`),
      '',
    ].join('\n'),
  );
  const daemon = await startDaemon(bin, ['-f', cfg, '-db'], () => accepts(port), 15_000);
  return { url: `http://127.0.0.1:${port}`, stop: () => daemon.stop() };
}
