// Real servers (Prometheus, Alertmanager) started by a test on loopback and always stopped by it.
import { spawn, type ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';

export interface Daemon {
  child: ChildProcess;
  output: () => string;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

export interface DaemonOptions {
  /** Where the child's stdout goes: piped into output() (default), or an fd (a gateway writing its log there). */
  stdout?: number;
  env?: NodeJS.ProcessEnv;
}

/**
 * Starts `bin args` and resolves once it is ready, within `timeoutMs`: `ready` is a URL that must answer
 * 200, or a probe (e.g. a bare TCP connect, for a gateway whose every request would be logged).
 */
export async function startDaemon(bin: string, args: string[], ready: string | (() => Promise<boolean>), timeoutMs = 20_000, opts: DaemonOptions = {}): Promise<Daemon> {
  const child = spawn(bin, args, { stdio: ['ignore', opts.stdout ?? 'pipe', 'pipe'], env: opts.env ?? process.env });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const daemon: Daemon = {
    child,
    output: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(killer);
      }
    },
  };
  const probe =
    typeof ready === 'string'
      ? async () => {
          try {
            return (await fetch(ready, { signal: AbortSignal.timeout(1_000) })).ok;
          } catch {
            return false; // not listening yet
          }
        }
      : ready;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${bin} exited with ${child.exitCode}:\n${out}`);
    if (await probe()) return daemon;
    if (Date.now() > deadline) {
      await daemon.stop();
      throw new Error(`${bin} not ready (${typeof ready === 'string' ? ready : 'probe'}) within ${timeoutMs} ms:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Whether 127.0.0.1:`port` accepts a connection (closed at once: no request is made). */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface PrometheusOptions {
  /** Working folder: config, rules and TSDB go here. */
  dir: string;
  /** The rule file's text (a test copy of the pack, usually with short windows). */
  rules: string;
  /** host:port of the exporter, scraped every second as job "zero-plane-exporter". */
  scrapeTarget?: string;
  /** Instead: one job, each target with its own target labels (e.g. `cluster`). */
  scrape?: { job: string; targets: { target: string; labels: Record<string, string> }[] };
  /** honor_labels: true on the scrape job: labels the exporter writes win over the target's (OTLP resource labels). */
  honorLabels?: boolean;
  /** host:port of the Alertmanager(s) to send alerts to (each gets every alert). */
  alertmanager?: string | string[];
}

/** A real Prometheus on 127.0.0.1: 1 s scrapes and evaluations, alerts resent every second. */
export async function startPrometheus(bin: string, opts: PrometheusOptions): Promise<{ url: string; daemon: Daemon }> {
  const { stringify } = await import('yaml');
  const { writeFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const rules = join(opts.dir, 'rules.yml');
  writeFileSync(rules, opts.rules);
  const config = join(opts.dir, 'prometheus.yml');
  writeFileSync(
    config,
    stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: [rules],
      ...(opts.alertmanager === undefined ? {} : { alerting: { alertmanagers: [{ static_configs: [{ targets: [opts.alertmanager].flat() }] }] } }),
      scrape_configs: [
        {
          ...(opts.scrape
            ? { job_name: opts.scrape.job, static_configs: opts.scrape.targets.map((t) => ({ targets: [t.target], labels: t.labels })) }
            : { job_name: 'zero-plane-exporter', static_configs: [{ targets: [opts.scrapeTarget] }] }),
          ...(opts.honorLabels === true ? { honor_labels: true } : {}),
        },
      ],
    }),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const daemon = await startDaemon(
    bin,
    [`--config.file=${config}`, `--storage.tsdb.path=${join(opts.dir, 'prom')}`, `--web.listen-address=127.0.0.1:${port}`, '--rules.alert.resend-delay=1s'],
    `${url}/-/ready`,
  );
  return { url, daemon };
}
