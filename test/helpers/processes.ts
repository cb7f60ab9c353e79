// Real servers (Prometheus, Alertmanager) started by a test on loopback and always stopped by it.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

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

/** Starts `bin args` and resolves once `readyUrl` answers 200, within `timeoutMs`. */
export async function startDaemon(bin: string, args: string[], readyUrl: string, timeoutMs = 20_000): Promise<Daemon> {
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
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
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${bin} exited with ${child.exitCode}:\n${out}`);
    try {
      const res = await fetch(readyUrl, { signal: AbortSignal.timeout(1_000) });
      if (res.ok) return daemon;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await daemon.stop();
      throw new Error(`${bin} not ready at ${readyUrl} within ${timeoutMs} ms:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
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
        opts.scrape
          ? { job_name: opts.scrape.job, static_configs: opts.scrape.targets.map((t) => ({ targets: [t.target], labels: t.labels })) }
          : { job_name: 'zero-plane-exporter', static_configs: [{ targets: [opts.scrapeTarget] }] },
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
