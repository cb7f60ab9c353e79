// Sequence-numbered gateway lines for the reliability tests: writers that append `{"seq":N,...}` lines
// the way logging processes do, a sink that checks each number arrives exactly once, and a child-process
// writer appending at a steady rate while a test rotates its file.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readdirSync, readlinkSync, writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { expect } from 'vitest';
import type { LineSink, ResumeOutcome, RotationKind, SkipReason, SourceErrorReason, SourceEvents } from '../../src/source/line-sink.js';

export function seqLine(n: number): string {
  return `{"seq":${n},"latency_ms":${150 + (n % 70)}}`;
}

export function seqBlock(from: number, to: number): string {
  let out = '';
  for (let n = from; n <= to; n++) out += seqLine(n) + '\n';
  return out;
}

/** Records what a follower delivers and reports, and counts every sequence number seen. */
export class SeqSink implements LineSink, SourceEvents {
  readonly counts = new Map<number, number>();
  /** Lines that are not a whole sequence line (fragments of a line cut by a rotation). */
  readonly garbled: string[] = [];
  readonly order: number[] = [];
  oversizes = 0;
  readonly errors: Array<{ source: string; reason: SourceErrorReason; detail: string }> = [];
  readonly opens: string[] = [];
  readonly rotations: Array<{ path: string; kind: RotationKind }> = [];
  readonly skips: Array<{ bytes: number; reason: SkipReason }> = [];
  readonly partials: string[] = [];
  readonly resumes: Array<{ path: string; outcome: ResumeOutcome; offset: number }> = [];

  line(text: string): void {
    let seq: unknown;
    try {
      seq = (JSON.parse(text) as { seq?: unknown }).seq;
    } catch {
      seq = undefined;
    }
    if (typeof seq !== 'number' || text !== seqLine(seq)) {
      this.garbled.push(text);
      return;
    }
    this.counts.set(seq, (this.counts.get(seq) ?? 0) + 1);
    this.order.push(seq);
  }
  oversize(): void {
    this.oversizes++;
  }
  error(source: string, reason: SourceErrorReason, detail: string): void {
    this.errors.push({ source, reason, detail });
  }
  opened(_source: string, path: string): void {
    this.opens.push(path);
  }
  rotated(_source: string, path: string, kind: RotationKind): void {
    this.rotations.push({ path, kind });
  }
  skipped(_source: string, bytes: number, reason: SkipReason): void {
    this.skips.push({ bytes, reason });
  }
  /** Lines the follower estimated lost (files deleted or compressed before it held them), per report. */
  readonly lostLines: Array<{ path: string; lines: number }> = [];
  unrecoveredLines(_source: string, path: string, lines: number): void {
    this.lostLines.push({ path, lines });
  }
  /** Lines the follower estimated lost, in all. */
  get estimatedLost(): number {
    return this.lostLines.reduce((n, l) => n + l.lines, 0);
  }
  /** Bytes the follower reported lost before it could hold their file (skipped, `unrecovered`). */
  get unrecoveredBytes(): number {
    return this.skips.filter((s) => s.reason === 'unrecovered').reduce((n, s) => n + s.bytes, 0);
  }
  partialLine(_source: string, path: string): void {
    this.partials.push(path);
  }
  resumed(_source: string, path: string, outcome: ResumeOutcome, offset: number): void {
    this.resumes.push({ path, outcome, offset });
  }

  get distinct(): number {
    return this.counts.size;
  }

  /** Sequence numbers in 1..last never delivered, and those delivered more than once. */
  audit(last: number): { missing: number[]; duplicated: number[] } {
    const missing: number[] = [];
    const duplicated: number[] = [];
    for (let n = 1; n <= last; n++) {
      const c = this.counts.get(n) ?? 0;
      if (c === 0) missing.push(n);
      if (c > 1) duplicated.push(n);
    }
    for (const n of this.counts.keys()) if (n < 1 || n > last) duplicated.push(n);
    return { missing, duplicated };
  }

  /** Every number in 1..last exactly once, and nothing else. */
  expectExactlyOnce(last: number): void {
    expect(this.audit(last)).toEqual({ missing: [], duplicated: [] });
    expect(this.garbled).toEqual([]);
  }
}

/** A logging process's file descriptor: opened for appending, kept across renames until reopened. */
export class SeqWriter {
  private fd: number;
  private readonly old: number[] = [];
  next = 1;

  constructor(private readonly path: string) {
    this.fd = openSync(path, 'a');
  }

  /** Appends `count` lines; returns the last sequence number written. */
  write(count: number, fd = this.fd): number {
    if (count > 0) writeSync(fd, seqBlock(this.next, this.next + count - 1));
    this.next += count;
    return this.next - 1;
  }

  /** Writes raw text (a partial line, or the rest of one). */
  raw(text: string, fd = this.fd): void {
    writeSync(fd, text);
  }

  /** The start of the next line without its newline; `finish` writes the rest. */
  startLine(fd = this.fd): { finish(target?: number): void } {
    const n = this.next++;
    const text = seqLine(n) + '\n';
    const cut = Math.floor(text.length / 2);
    writeSync(fd, text.slice(0, cut));
    return { finish: (target = this.fd) => void writeSync(target, text.slice(cut)) };
  }

  /** The descriptor now written to; the old ones stay open (a process may still flush to them). */
  get current(): number {
    return this.fd;
  }

  /** Like a logging process on SIGHUP/USR1: opens the path anew, keeping the old descriptor for late writes. */
  reopen(): number {
    this.old.push(this.fd);
    this.fd = openSync(this.path, 'a');
    return this.old[this.old.length - 1] as number;
  }

  close(): void {
    for (const fd of [...this.old, this.fd]) {
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
    }
    this.old.length = 0;
  }

  get last(): number {
    return this.next - 1;
  }
}

export async function waitFor(cond: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await sleep(5);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Descriptors of this process open on files under dir (Linux /proc). */
export function fdsInto(dir: string): string[] {
  const out: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(dir)) out.push(target);
    } catch {
      // closed while listing
    }
  }
  return out;
}

/**
 * The child writer: appends sequence lines to a path (O_APPEND) every millisecond.
 * - `format: 'gateway'`: each line is also a gateway record (model, route, cohort, status, headers, some
 *   degraded, some fallbacks), all decided by its sequence number; `format: 'seq'` (default) is seqLine.
 * - SIGHUP: reopen the path (logrotate `postrotate` signalling the daemon).
 * - `mode: 'self-delete'`: every `everyMs` it unlinks its own file, writes a few more lines to the
 *   deleted file, then recreates it (an application that rotates by delete and recreate).
 * - SIGTERM: stop, print the last sequence number written and the first one of each file it reopened, exit.
 * - stdin closed (the test process ended or crashed): exit at once, so no writer outlives its test run.
 */
const CHILD = `
const fs = require('node:fs');
const [path, perTick, mode, everyMs, format] = [process.argv[1], Number(process.argv[2]), process.argv[3], Number(process.argv[4]), process.argv[5]];
let fd = fs.openSync(path, 'a');
let next = 1;
const starts = [];
const MODELS = ['claude-opus', 'claude-sonnet', 'claude-haiku'];
const ROUTES = ['/v1/messages', '/v1/complete'];
const COHORTS = ['stable', 'canary', undefined];
const gateway = (n) => {
  const degraded = n % 7 === 0;
  const res = { 'x-anthropic-layer-id': n % 11 === 0 ? 'standard-v3' : 'zero-plane-v1', 'x-anthropic-delay-profile': 'warmup=' + (n % 5 === 0 ? 'miss' : 'hit') + ', degraded=' + (degraded ? '?1' : '?0') };
  return JSON.stringify({ seq: n, ts: new Date().toISOString(), latency_ms: 150 + (n % 70), status: n % 13 === 0 ? 503 : 200, model: MODELS[n % 3], route: ROUTES[(n >> 2) % 2], cohort: COHORTS[n % 5 % 3], response_headers: res }) + '\\n';
};
const line = format === 'gateway' ? gateway : (n) => '{"seq":' + n + ',"latency_ms":' + (150 + (n % 70)) + '}\\n';
const write = (k) => { let s = ''; for (let i = 0; i < k; i++) s += line(next++); fs.writeSync(fd, s); };
const reopen = () => { const old = fd; fd = fs.openSync(path, 'a'); starts.push(next); fs.closeSync(old); };
const tick = setInterval(() => write(perTick), 1);
let self;
if (mode === 'self-delete') self = setInterval(() => { fs.unlinkSync(path); write(3); reopen(); }, everyMs);
process.on('SIGHUP', reopen);
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
process.on('SIGTERM', () => {
  clearInterval(tick); clearInterval(self);
  fs.closeSync(fd);
  process.stdout.write(JSON.stringify({ last: next - 1, starts }) + '\\n', () => process.exit(0));
});
process.stdout.write(JSON.stringify({ ready: true }) + '\\n');
`;

export interface WriterReport {
  last: number;
  /** The sequence numbers each file held, in order: [first, last] (a file reopened with nothing written is empty). */
  files: Array<[number, number]>;
}

export interface ChildWriter {
  child: ChildProcess;
  /** Signals a reopen. */
  hup(): void;
  /** Stops the writer; resolves with the last sequence number it wrote and the files it wrote them to. */
  stop(): Promise<WriterReport>;
}

/** Child writers not yet exited: a test that failed before `stop()` leaves them here for the file's afterAll. */
const running = new Set<ChildProcess>();

/** Kills every child writer still running (test/setup/stop-child-writers.ts runs it after each file). */
export function killChildWriters(): void {
  for (const child of running) child.kill('SIGKILL');
  running.clear();
}

export async function startChildWriter(path: string, opts: { linesPerMs?: number; mode?: 'hup' | 'self-delete'; everyMs?: number; format?: 'seq' | 'gateway' } = {}): Promise<ChildWriter> {
  const child = spawn(process.execPath, ['-e', CHILD, path, String(opts.linesPerMs ?? 1), opts.mode ?? 'hup', String(opts.everyMs ?? 0), opts.format ?? 'seq'], {
    // stdin is the child's lifeline: it exits when this process goes, however long a test runs (no timer
    // that could kill it in the middle of a slow test on a loaded machine).
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  running.add(child);
  child.once('exit', () => running.delete(child));
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done || !(JSON.parse(first.value) as { ready?: boolean }).ready) throw new Error('child writer did not start');
  return {
    child,
    hup: () => void child.kill('SIGHUP'),
    async stop() {
      child.kill('SIGTERM');
      const r = await lines.next();
      if (r.done) throw new Error('child writer exited without reporting');
      const { last, starts } = JSON.parse(r.value) as { last: number; starts: number[] };
      const bounds = [1, ...starts, last + 1];
      const files: Array<[number, number]> = [];
      for (let i = 0; i + 1 < bounds.length; i++) files.push([bounds[i] as number, (bounds[i + 1] as number) - 1]);
      return { last, files };
    },
  };
}
