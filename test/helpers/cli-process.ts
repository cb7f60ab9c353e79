// Runs the built CLI (bin/zero-plane-exporter.js → dist/) as a real child process, as users run it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/zero-plane-exporter.js', import.meta.url));

export interface ServeProcess {
  child: ChildProcess;
  /** http://127.0.0.1:PORT */
  url: string;
  logs: Record<string, unknown>[];
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `serve` on an ephemeral loopback port and resolves once it logs that it is serving. */
export function startServe(args: string[], timeoutMs = 10_000, launch?: Launch): Promise<ServeProcess> {
  return startCommand('serve', ['--web.listen-address=127.0.0.1:0', ...args], timeoutMs, launch === undefined ? {} : { launch });
}

/** How the CLI's argv (node, the bin, its arguments) is started: as it is, or wrapped (a shell setting limits). */
export type Launch = (argv: string[]) => [string, string[]];

/** Runs the CLI under `sh -c 'ulimit -n N; exec …'`: at most N descriptors (soft and hard), the process itself exec'd (its pid is node's). */
export function withDescriptorLimit(n: number): Launch {
  return (argv) => ['sh', ['-c', `ulimit -n ${n} && exec "$@"`, 'sh', ...argv]];
}

/**
 * Starts any serving command (`serve`, `demo`) and resolves once it logs that it is serving. Pass the
 * listen address yourself (`--web.listen-address=127.0.0.1:0`). `bin` is another install's CLI (default this tree's).
 */
export function startCommand(command: string, args: string[], timeoutMs = 10_000, opts: { bin?: string; launch?: Launch } = {}): Promise<ServeProcess> {
  const argv = [process.execPath, opts.bin ?? BIN, command, ...args];
  const [cmd, cmdArgs] = opts.launch === undefined ? [argv[0] as string, argv.slice(1)] : opts.launch(argv);
  const child = spawn(cmd, cmdArgs, { stdio: ['pipe', 'pipe', 'pipe'] });
  const logs: Record<string, unknown>[] = [];
  let buffered = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} did not start within ${timeoutMs} ms; logs: ${JSON.stringify(logs)}`));
    }, timeoutMs);
    child.stderr?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      let nl: number;
      while ((nl = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, nl);
        buffered = buffered.slice(nl + 1);
        try {
          const entry = JSON.parse(line) as Record<string, unknown>;
          logs.push(entry);
          if (entry.msg === 'serving') {
            clearTimeout(timer);
            resolve({
              child,
              url: `http://${entry.address as string}`,
              logs,
              stop: async (signal = 'SIGTERM') => {
                if (child.exitCode === null) child.kill(signal);
                return exited;
              },
            });
          }
        } catch {
          logs.push({ unstructured: line });
        }
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited with ${code} before serving; logs: ${JSON.stringify(logs)}`));
    });
  });
}

/** Runs the CLI to its end; `cwd` is its working directory (default: this process's). */
export function runCli(args: string[], input?: string, cwd?: string) {
  const r = spawnSync(process.execPath, [BIN, ...args], { input, encoding: 'utf8', timeout: 20_000, ...(cwd === undefined ? {} : { cwd }) });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export async function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The first /metrics body answered with 200: after a restore from a checkpoint, /metrics is 503 until caught up. */
export async function metricsWhenReady(server: ServeProcess, timeoutMs = 15_000): Promise<string> {
  return waitFor(
    async () => {
      const res = await fetch(`${server.url}/metrics`, { signal: AbortSignal.timeout(5_000) });
      const text = await res.text();
      return res.status === 200 ? text : undefined;
    },
    timeoutMs,
    '/metrics to answer 200',
  );
}

/** The value of one sample in exposition text, or undefined when the series is absent. */
export function sample(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

/** serve's start-up warning that the gate webhook is open (no token, no basic auth): expected in tests that set neither. */
export function isOpenWebhookWarning(entry: Record<string, unknown>): boolean {
  return entry.level === 'warn' && String(entry.msg).includes('gate webhook accepts alerts from anyone');
}

/** Runs the CLI with its stdout written to `out` (an export is too big for a pipe's buffer); `input` is its stdin. */
export function runCliToFile(args: string[], out: string, input?: string): { code: number | null; stderr: string } {
  const fd = openSync(out, 'w');
  try {
    const r = spawnSync(process.execPath, [BIN, ...args], { stdio: [input === undefined ? 'ignore' : 'pipe', fd, 'pipe'], input, encoding: 'utf8', timeout: 60_000 });
    return { code: r.status, stderr: r.stderr };
  } finally {
    closeSync(fd);
  }
}
