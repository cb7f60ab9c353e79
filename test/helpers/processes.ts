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
