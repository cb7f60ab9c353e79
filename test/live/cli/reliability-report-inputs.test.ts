// `report` ignored the first SIGTERM / Ctrl-C; `report <(cmd)`, `/dev/stdin` from a pipe and a FIFO failed
// with ESPIPE (positional reads on a pipe); read errors (EISDIR) did not name the input. Now anything that
// can be opened and read in order is read as a stream, every error names the input, and the first
// SIGTERM/SIGINT stops it (exit 143/130, nothing printed), even while it waits on a FIFO with no writer.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { requireBinary } from '../../helpers/binaries.js';
import { BIN, runCli } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const LINES = 500;

function log(): string {
  let out = '';
  for (let n = 1; n <= LINES; n++) {
    out += `${JSON.stringify({ latency_ms: 150 + (n % 50), status: 200, model: 'claude-sonnet', route: '/v1/messages', cohort: 'stable', response_headers: { 'x-anthropic-layer-id': n % 10 === 0 ? 'standard-v3' : 'zero-plane-v1' } })}\n`;
  }
  return out;
}

/** The report's JSON and exit code. */
function parsed(r: { code: number | null; stdout: string; stderr: string }): { code: number | null; report: { lines: number; hits: number } } {
  expect(r.stderr).toBe('');
  return { code: r.code, report: JSON.parse(r.stdout) as { lines: number; hits: number } };
}

const mkfifo = (path: string) => expect(spawnSync(requireBinary('mkfifo'), [path]).status).toBe(0);

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Once `report --log.level=debug` says it is reading its input: its signal handlers are in, its read under way. */
function reading(child: ReturnType<typeof spawn>): Promise<void> {
  return new Promise((resolve) => {
    let seen = '';
    const onData = (c: Buffer) => {
      seen += c.toString();
      if (seen.includes('"msg":"report: reading input"')) {
        child.stderr?.off('data', onData);
        resolve();
      }
    };
    child.stderr?.on('data', onData);
  });
}

/** `report` as a child process; `feed` runs once it is started (writes to a FIFO, sends a signal). */
function report(args: string[], feed: (child: ReturnType<typeof spawn>) => void, stdin: 'pipe' | 'ignore' = 'ignore'): Promise<Run> {
  const child = spawn(process.execPath, [BIN, 'report', ...args], { stdio: [stdin, 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  return new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      clearTimeout(killer);
      // Let the pipes drain.
      setImmediate(() => resolve({ code, signal, stdout, stderr }));
    });
    feed(child);
  });
}

describe('report reads pipes, FIFOs, /dev/stdin and process substitution', () => {
  it('a FIFO, plain and gzip', async () => {
    const dir = tempDir('zp-report-fifo-');
    for (const [name, bytes] of [
      ['plain', Buffer.from(log())],
      ['gzip', gzipSync(log())],
    ] as const) {
      const fifo = join(dir, `${name}.fifo`);
      mkfifo(fifo);
      const r = await report(['--format=json', fifo], () => {
        // The writer opens after the reader: report waits for it, as cat would.
        setTimeout(() => writeFileSync(fifo, bytes), 100);
      });
      expect(parsed(r)).toMatchObject({ code: 0, report: { lines: LINES, hits: LINES - LINES / 10 } });
    }
  });

  it('/dev/stdin from a pipe (a shell pipeline) and from a socket pair (how Node starts children)', async () => {
    const dir = tempDir('zp-report-stdin-');
    const file = join(dir, 'g.log');
    writeFileSync(file, log());
    const sh = requireBinary('sh');
    const piped = spawnSync(sh, ['-c', `cat '${file}' | exec '${process.execPath}' '${BIN}' report --format=json /dev/stdin`], { encoding: 'utf8', timeout: 20_000 });
    expect(parsed({ code: piped.status, stdout: piped.stdout, stderr: piped.stderr })).toMatchObject({ code: 0, report: { lines: LINES } });
    const r = await report(['--format=json', '/dev/stdin'], (child) => child.stdin?.end(log()), 'pipe');
    expect(parsed(r)).toMatchObject({ code: 0, report: { lines: LINES } });
  });

  it('process substitution: report <(cmd)', () => {
    const dir = tempDir('zp-report-subst-');
    const file = join(dir, 'g.log');
    writeFileSync(file, log());
    const bash = requireBinary('bash');
    for (const cmd of [`cat '${file}'`, `gzip -c '${file}'`]) {
      const r = spawnSync(bash, ['-c', `exec '${process.execPath}' '${BIN}' report --format=json <(${cmd})`], { encoding: 'utf8', timeout: 20_000 });
      expect(parsed({ code: r.status, stdout: r.stdout, stderr: r.stderr })).toMatchObject({ code: 0, report: { lines: LINES } });
    }
  });
});

describe('report read errors name the input', () => {
  it('a directory: EISDIR, exit 1, the path in the message', () => {
    const dir = tempDir('zp-report-dir-');
    const r = runCli(['report', dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cannot read input ${dir}: EISDIR`);
  });

  it('a missing file and one not readable as a whole: the path in the message', () => {
    const dir = tempDir('zp-report-missing-');
    const missing = join(dir, 'nope.log');
    const r = runCli(['report', missing]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cannot open input ${missing}: ENOENT`);
    const bad = join(dir, 'bad.gz');
    writeFileSync(bad, Buffer.concat([gzipSync(log()).subarray(0, 200)])); // a gzip stream cut short
    const r2 = runCli(['report', bad]);
    expect(r2.code).toBe(1);
    expect(r2.stderr).toContain(`cannot read input ${bad}: `);
  });
});

describe('report stops on the first SIGTERM or SIGINT', () => {
  it.each([
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)('%s while it waits on a FIFO that has no writer: exit %i, nothing printed', async (signal, code) => {
    const dir = tempDir('zp-report-sig-');
    const fifo = join(dir, 'never.fifo');
    mkfifo(fifo);
    const r = await report(['--log.level=debug', fifo], (child) => {
      // Once it is reading, and a moment later, when it waits in open() for a writer.
      void reading(child).then(() => setTimeout(() => child.kill(signal), 200));
    });
    expect({ code: r.code, signal: r.signal, stdout: r.stdout }).toEqual({ code, signal: null, stdout: '' });
    expect(r.stderr).toContain(`"msg":"report interrupted; nothing printed","signal":"${signal}"`);
  });

  it.each([
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)('%s while it reads a pipe that never ends: exit %i, nothing printed', async (signal, code) => {
    const r = await report(
      ['--log.level=debug', '-'],
      (child) => {
        child.stdin?.write(log()); // some lines, and the pipe stays open
        void reading(child).then(() => setTimeout(() => child.kill(signal), 200));
      },
      'pipe',
    );
    expect({ code: r.code, signal: r.signal, stdout: r.stdout }).toEqual({ code, signal: null, stdout: '' });
  });

  it('SIGTERM while it reads a FIFO whose writer stays open: it ends, by the signal raised again (a shell sees 143)', async () => {
    const dir = tempDir('zp-report-sig-');
    const fifo = join(dir, 'open.fifo');
    mkfifo(fifo);
    let writer: number | undefined;
    try {
      const r = await report(['--log.level=debug', fifo], (child) => {
        // The read waits in the thread pool for the next bytes; Node's own exit would wait for it.
        writer = openSync(fifo, 'w');
        writeFileSync(writer, log());
        void reading(child).then(() => setTimeout(() => child.kill('SIGTERM'), 200));
      });
      expect({ code: r.code, signal: r.signal, stdout: r.stdout }).toEqual({ code: null, signal: 'SIGTERM', stdout: '' });
      expect(r.stderr).toContain('"msg":"report interrupted; nothing printed","signal":"SIGTERM"');
    } finally {
      if (writer !== undefined) closeSync(writer);
    }
  });
});
