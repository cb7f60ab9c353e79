// --web.systemd-socket on a real socket activation: systemd's own systemd-socket-activate binds the
// ports, waits for the first connection, then execs the exporter with the listening sockets as
// descriptors 3, 4 and LISTEN_FDS / LISTEN_PID set exactly as systemd sets them. The connection that
// woke it is served, and so is every later one, on each socket. Without sockets for this process the
// exporter exits 2 saying why.
import { spawn, spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { requireBinary } from '../../helpers/binaries.js';
import { BIN, waitFor } from '../../helpers/cli-process.js';
import { freePort } from '../../helpers/processes.js';

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

describe('socket activation (LISTEN_FDS)', () => {
  it('serves on the sockets systemd-socket-activate passed, starting with the connection that activated it', async () => {
    const activate = requireBinary('systemd-socket-activate');
    const [a, b] = [await freePort(), await freePort()];
    const child = spawn(activate, ['-l', `127.0.0.1:${a}`, '-l', `127.0.0.1:${b}`, process.execPath, BIN, 'serve', '--web.systemd-socket'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    stops.push(async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    });
    await waitFor(() => (out.includes(`Listening on 127.0.0.1:${b}`) ? true : undefined), 10_000, 'systemd-socket-activate listening');
    expect(out).not.toContain('"msg":"serving"');

    // This request is what starts the exporter (systemd-socket-activate execs it on the first connection).
    const first = await fetch(`http://127.0.0.1:${a}/-/healthy`, { signal: AbortSignal.timeout(15_000) });
    expect(first.status).toBe(200);
    const serving = JSON.parse(out.split('\n').find((l) => l.includes('"msg":"serving"')) ?? '{}') as Record<string, unknown>;
    expect(serving).toMatchObject({ systemdSocket: true, addresses: `127.0.0.1:${a},127.0.0.1:${b}` });
    expect(out).toContain('Execing');
    for (const port of [a, b]) {
      const r = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(r.status).toBe(200);
      expect(await r.text()).toContain('zero_plane_exporter_build_info');
    }
    // The exporter replaced systemd-socket-activate in its process: SIGTERM stops it cleanly.
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });

  it('without sockets for this process it exits 2 saying why', () => {
    const run = (env: Record<string, string>) => {
      const r = spawnSync(process.execPath, [BIN, 'serve', '--web.systemd-socket'], { encoding: 'utf8', timeout: 20_000, env: { PATH: process.env.PATH ?? '', ...env } });
      return { code: r.status, stderr: r.stderr };
    };
    const none = run({});
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no sockets from systemd (LISTEN_FDS and LISTEN_PID are not set)');
    const other = run({ LISTEN_FDS: '1', LISTEN_PID: '1' });
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/the sockets are for process 1, not this one/);
    // The right process (the shell's pid, kept by exec, as systemd sets it) but no descriptors.
    const zero = spawnSync('sh', ['-c', `LISTEN_PID=$$ LISTEN_FDS=0 exec "${process.execPath}" "${BIN}" serve --web.systemd-socket`], { encoding: 'utf8', timeout: 20_000 });
    expect(zero.status).toBe(2);
    expect(zero.stderr).toContain('LISTEN_FDS is "0": no socket activation file descriptors found');
  });
});
