// How `backtest` and `export` end early, as in a shell: a reader that closes the pipe (`export | head`)
// ends the run quietly with 141, a full disk with a message and 1, SIGTERM/SIGINT with 143/130 at once,
// even while waiting on a FIFO whose writer stays open (by the signal raised again once it has cleaned up);
// in every case the export's scratch file under TMPDIR is gone.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, writeFileSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../../helpers/cli-process.js';
import { heldOutLog } from '../../helpers/held-out-log.js';
import { tempDir } from '../../helpers/temp-dir.js';

const dir = tempDir('zp-stops-');
const log = join(dir, 'gateway.log');
let text = '';

/** A scratch TMPDIR per run, so what a run leaves behind there is seen. */
function scratch(name: string): string {
  const d = join(dir, name);
  mkdirSync(d);
  return d;
}

interface Ended {
  /** The status a shell reports: the exit code, or 128 + the number of the signal that ended it. */
  code: number | null;
  stderr: string;
  ms: number;
}

/** Runs the CLI with stdin from a FIFO fed half of the log; once it has read some, sends `signal`. */
async function signalledWhileReading(args: string[], signal: NodeJS.Signals, tmp: string): Promise<Ended> {
  const fifo = join(dir, `${signal}-${args[0]}.fifo`);
  const made = spawnSync('mkfifo', [fifo]);
  expect(made.status, String(made.stderr)).toBe(0);
  const child = spawn(process.execPath, [BIN, ...args, fifo], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, TMPDIR: tmp } });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const ended = new Promise<number | null>((resolve) => child.once('exit', (code, sig) => resolve(code ?? (sig === null || sig === 'SIGKILL' ? null : 128 + constants.signals[sig]))));
  // Blocks until the CLI opens the FIFO; the writer is then kept open, so the CLI waits for more.
  const w = openSync(fifo, 'w');
  writeFileSync(w, text.slice(0, text.length / 2));
  try {
    await new Promise((r) => setTimeout(r, 700));
    const at = Date.now();
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const code = await ended;
    clearTimeout(timer);
    return { code, stderr, ms: Date.now() - at };
  } finally {
    closeSync(w);
  }
}

beforeAll(() => {
  text = `${heldOutLog({ rate: 2 }).lines.join('\n')}\n`;
  writeFileSync(log, text);
});

describe('backtest and export, ended early', () => {
  it('export | head: the closed pipe ends it quietly with 141, its scratch file removed', async () => {
    const tmp = scratch('epipe');
    const child = spawn(process.execPath, [BIN, 'export', log], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TMPDIR: tmp } });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const ended = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const first = await new Promise<string>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(d.toString())));
    expect(first).toMatch(/^# TYPE zero_plane_requests counter/);
    child.stdout.destroy();
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const code = await ended;
    clearTimeout(timer);
    expect(code).toBe(141);
    expect(stderr).toBe('');
    expect(readdirSync(tmp)).toEqual([]);
  });

  it('export > /dev/full: exit 1 saying it cannot write, its scratch file removed', () => {
    const tmp = scratch('full');
    const full = openSync('/dev/full', 'w');
    try {
      const r = spawnSync(process.execPath, [BIN, 'export', log], { stdio: ['ignore', full, 'pipe'], encoding: 'utf8', timeout: 20_000, env: { ...process.env, TMPDIR: tmp } });
      expect(r.status).toBe(1);
      expect(r.stderr).toContain('zero-plane-exporter: export: cannot write the output: ENOSPC');
    } finally {
      closeSync(full);
    }
    expect(readdirSync(tmp)).toEqual([]);
  });

  it('SIGTERM while export reads a FIFO: exit 143 at once, its scratch file removed', async () => {
    const tmp = scratch('term');
    const r = await signalledWhileReading(['export'], 'SIGTERM', tmp);
    expect(r.code, r.stderr).toBe(143);
    expect(r.stderr).toContain('"msg":"export interrupted","signal":"SIGTERM"');
    expect(r.ms).toBeLessThan(5_000);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it('SIGINT while backtest reads a FIFO: exit 130 at once, printing no table', async () => {
    const r = await signalledWhileReading(['backtest'], 'SIGINT', scratch('int'));
    expect(r.code, r.stderr).toBe(130);
    expect(r.stderr).toContain('"msg":"backtest interrupted","signal":"SIGINT"');
    expect(r.ms).toBeLessThan(5_000);
  });

  it('SIGTERM while backtest waits for a FIFO nobody writes: exit 143, not stuck in open()', async () => {
    const fifo = join(dir, 'no-writer.fifo');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const child = spawn(process.execPath, [BIN, 'backtest', fifo], { stdio: ['ignore', 'ignore', 'pipe'] });
    const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    await new Promise((r) => setTimeout(r, 700));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const end = await ended;
    clearTimeout(timer);
    // Its open() is let go of, so it exits with the code itself rather than by the signal raised again.
    expect(end).toEqual({ code: 143, signal: null });
  });
});
