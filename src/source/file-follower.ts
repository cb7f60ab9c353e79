import type { Stats } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import fg from 'fast-glob';
import type { LineSink, SourceErrorReason, SourceEvents } from './line-sink.js';
import { LineSplitter } from './line-splitter.js';
import { errorMessage, fsErrorReason } from './fs-error-reason.js';

export { StdinFollower } from './stdin-follower.js';

export interface FollowOptions {
  patterns: string[];
  maxLineBytes: number;
  pollIntervalMs?: number; // default 250
  /** Where to begin in files that exist at startup; default 'end'. Files that appear later are always read from the start. */
  startAt?: 'end' | 'start';
  readChunkBytes?: number; // default 1 MiB
}

const DEFAULT_POLL_INTERVAL_MS = 250;
const DEFAULT_READ_CHUNK_BYTES = 1 << 20;
/** Per file and poll, so one fast-growing file cannot starve the others. */
const MAX_BYTES_PER_FILE_PER_POLL = 64 << 20;
const LF = 0x0a;

const GLOB_OPTIONS = {
  onlyFiles: true,
  dot: true,
  followSymbolicLinks: true,
  suppressErrors: true,
  unique: true,
} as const;

/** One open file, known by identity (dev:ino) so a rename is told apart from a new file. */
interface Followed {
  readonly key: string;
  /** Latest path it was seen under. */
  path: string;
  readonly source: string;
  readonly fh: FileHandle;
  offset: number;
  splitter: LineSplitter;
}

/** A path to look at this poll, and the pattern that produced it. */
interface Candidate {
  path: string;
  source: string;
  /** Named directly in the config (not a glob match), so its absence is a problem. */
  literal: boolean;
}

/** A regular file seen this poll. */
interface Visible {
  path: string;
  source: string;
}

interface Problem {
  source: string;
  reason: SourceErrorReason;
  detail: string;
}

/**
 * Follows the files matching glob patterns as they grow, by polling: globs are
 * re-expanded every poll, new bytes are read from a tracked offset, and rename
 * and truncation rotations are handled without losing or repeating lines.
 */
export class FileFollower {
  private readonly followed = new Map<string, Followed>();
  /** Problems found during the current poll, keyed by what they are about. */
  private problems = new Map<string, Problem>();
  /** What was last reported per key, so a lasting problem is reported once, not every poll. */
  private reported = new Map<string, SourceErrorReason>();
  private readonly buf: Buffer;
  private timer: NodeJS.Timeout | undefined;
  private cycle: Promise<void> | undefined;
  private scanned = false;
  private started = false;
  private stopped = false;

  constructor(
    private readonly opts: FollowOptions,
    private readonly sink: LineSink,
    private readonly events: SourceEvents,
  ) {
    this.buf = Buffer.allocUnsafe(opts.readChunkBytes ?? DEFAULT_READ_CHUNK_BYTES);
  }

  /** Resolves once the first scan is done (existing files opened at their start position). */
  async start(): Promise<void> {
    if (this.started) throw new Error('FileFollower already started');
    this.started = true;
    await this.pollOnce();
    if (this.stopped) return;
    this.timer = setInterval(() => this.tick(), this.opts.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS);
  }

  /** Stops polling and closes every file; pending partial lines are not emitted. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    while (this.cycle) await this.cycle;
    const all = [...this.followed.values()];
    this.followed.clear();
    await Promise.all(all.map((f) => f.fh.close().catch(() => undefined)));
  }

  /** One scan and read cycle; waits for a cycle already running rather than overlapping it. */
  async pollOnce(): Promise<void> {
    while (this.cycle) await this.cycle;
    if (this.stopped) return;
    await this.runCycle();
  }

  private tick(): void {
    // A slow cycle (big backlog, slow disk) makes the next ticks skip, never overlap.
    if (this.cycle || this.stopped) return;
    void this.runCycle();
  }

  private runCycle(): Promise<void> {
    const cycle = this.cycleBody().finally(() => {
      this.cycle = undefined;
    });
    this.cycle = cycle;
    return cycle;
  }

  private async cycleBody(): Promise<void> {
    const fromEnd = !this.scanned && (this.opts.startAt ?? 'end') === 'end';
    this.scanned = true;
    this.problems = new Map();
    try {
      const visible = await this.locate(await this.expand());
      // Files whose path moved on are drained first, so their last lines precede the new file's.
      await this.followDetached(visible);
      for (const f of [...this.followed.values()]) {
        if (this.stopped) return;
        if (visible.has(f.key)) await this.readLive(f);
      }
      for (const [key, v] of visible) {
        if (this.stopped) return;
        if (!this.followed.has(key)) await this.openNew(v, fromEnd);
      }
    } catch (err) {
      // Every step catches its own errors; this only keeps a surprise from ending the poll loop.
      for (const pattern of this.opts.patterns) {
        this.problem(`pattern:${pattern}`, pattern, 'read_error', errorMessage(err));
      }
    }
    if (!this.stopped) this.publishProblems();
  }

  /** Expands the patterns into paths; a path is claimed by the first pattern that yields it. */
  private async expand(): Promise<Map<string, Candidate>> {
    const candidates = new Map<string, Candidate>();
    for (const pattern of this.opts.patterns) {
      if (!fg.isDynamicPattern(pattern)) {
        if (!candidates.has(pattern)) candidates.set(pattern, { path: pattern, source: pattern, literal: true });
        continue;
      }
      let paths: string[];
      try {
        paths = await fg(pattern, GLOB_OPTIONS);
      } catch (err) {
        this.problem(`pattern:${pattern}`, pattern, fsErrorReason(err), `${pattern}: ${errorMessage(err)}`);
        continue;
      }
      // Mid-rotation the only match may be renamed away while still followed: not a problem yet.
      if (paths.length === 0 && !this.follows((f) => f.source === pattern)) {
        this.problem(`pattern:${pattern}`, pattern, 'not_found', `no file matches ${pattern}`);
      }
      for (const path of paths.sort()) {
        if (!candidates.has(path)) candidates.set(path, { path, source: pattern, literal: false });
      }
    }
    return candidates;
  }

  /** Stats the candidates; returns the regular files among them by identity. */
  private async locate(candidates: Map<string, Candidate>): Promise<Map<string, Visible>> {
    const visible = new Map<string, Visible>();
    for (const c of candidates.values()) {
      let st: Stats;
      try {
        st = await stat(c.path);
      } catch (err) {
        const reason = fsErrorReason(err);
        // A glob match gone since listing is not a problem; a configured path is, unless
        // the file it named is still followed after a rename (the new one is not there yet).
        if (reason === 'not_found' && (!c.literal || this.follows((f) => f.path === c.path))) continue;
        this.problem(`file:${c.path}`, c.source, reason, `${c.path}: ${errorMessage(err)}`);
        continue;
      }
      if (!st.isFile()) {
        this.problem(`file:${c.path}`, c.source, 'read_error', `${c.path}: not a regular file`);
        continue;
      }
      const key = identity(st);
      // Two paths to one file (hard or symbolic link): read it once.
      if (!visible.has(key)) visible.set(key, { path: c.path, source: c.source });
    }
    return visible;
  }

  /**
   * Handles followed files no longer visible under their path: renamed away
   * (rotation) or deleted. They are drained, since the writer may still append
   * until it reopens, and closed once their path names a new file or they are deleted.
   */
  private async followDetached(visible: Map<string, Visible>): Promise<void> {
    for (const f of [...this.followed.values()]) {
      if (this.stopped) return;
      const seen = visible.get(f.key);
      if (seen) {
        // Renamed to another matching name: same file, keep reading where we were.
        f.path = seen.path;
        continue;
      }
      if (!(await this.drain(f))) continue;
      const end = await this.detachedEnd(f);
      if (end) await this.retire(f, end);
    }
  }

  /** Whether a detached file is done with: its path now names another file, or it was deleted. */
  private async detachedEnd(f: Followed): Promise<'replaced' | 'deleted' | undefined> {
    try {
      const st = await stat(f.path).catch(() => undefined);
      if (st && identity(st) !== f.key) return 'replaced';
      return (await f.fh.stat()).nlink === 0 ? 'deleted' : undefined;
    } catch (err) {
      this.problem(`read:${f.path}`, f.source, fsErrorReason(err), `${f.path}: ${errorMessage(err)}`);
      return undefined;
    }
  }

  private async retire(f: Followed, end: 'replaced' | 'deleted'): Promise<void> {
    this.followed.delete(f.key);
    // Nothing more will be read from it, so an unterminated last line is as complete as it gets.
    f.splitter.flush();
    await f.fh.close().catch(() => undefined);
    if (end === 'replaced') this.emit(() => this.events.rotated?.(f.source, f.path, 'rename'));
  }

  private async readLive(f: Followed): Promise<void> {
    let size: number;
    try {
      size = (await f.fh.stat()).size;
    } catch (err) {
      this.problem(`read:${f.path}`, f.source, 'read_error', `${f.path}: ${errorMessage(err)}`);
      return;
    }
    if (size < f.offset) {
      // Truncated in place (copytruncate): start over; a partial line from before belongs to the old content.
      f.offset = 0;
      f.splitter = new LineSplitter(this.opts.maxLineBytes, this.sink, f.source);
      this.emit(() => this.events.rotated?.(f.source, f.path, 'truncate'));
    }
    await this.drain(f);
  }

  private async openNew(v: Visible, fromEnd: boolean): Promise<void> {
    let fh: FileHandle;
    try {
      fh = await open(v.path, 'r');
    } catch (err) {
      this.problem(`file:${v.path}`, v.source, fsErrorReason(err), `${v.path}: ${errorMessage(err)}`);
      return;
    }
    let key: string;
    let offset = 0;
    try {
      const st = await fh.stat();
      key = identity(st);
      if (fromEnd) offset = await startOfLastLine(fh, st.size, this.opts.maxLineBytes, this.buf);
    } catch (err) {
      await fh.close().catch(() => undefined);
      this.problem(`file:${v.path}`, v.source, 'read_error', `${v.path}: ${errorMessage(err)}`);
      return;
    }
    // Stopped meanwhile, or the path was replaced between stat and open by a file already followed.
    if (this.stopped || this.followed.has(key)) {
      await fh.close().catch(() => undefined);
      return;
    }
    const f: Followed = {
      key,
      path: v.path,
      source: v.source,
      fh,
      offset,
      splitter: new LineSplitter(this.opts.maxLineBytes, this.sink, v.source),
    };
    this.followed.set(key, f);
    this.emit(() => this.events.opened?.(v.source, v.path));
    await this.drain(f);
  }

  /** Reads new bytes into the splitter; true when the end of the file was reached. */
  private async drain(f: Followed): Promise<boolean> {
    let budget = MAX_BYTES_PER_FILE_PER_POLL;
    try {
      while (budget > 0 && !this.stopped) {
        const { bytesRead } = await f.fh.read(this.buf, 0, Math.min(this.buf.length, budget), f.offset);
        if (bytesRead === 0) return true;
        f.offset += bytesRead;
        budget -= bytesRead;
        f.splitter.push(this.buf.subarray(0, bytesRead));
      }
    } catch (err) {
      this.problem(`read:${f.path}`, f.source, 'read_error', `${f.path}: ${errorMessage(err)}`);
    }
    return false;
  }

  private follows(pred: (f: Followed) => boolean): boolean {
    for (const f of this.followed.values()) if (pred(f)) return true;
    return false;
  }

  private problem(key: string, source: string, reason: SourceErrorReason, detail: string): void {
    if (!this.problems.has(key)) this.problems.set(key, { source, reason, detail });
  }

  /** Reports problems that are new or changed since the last poll; ones that went away are forgotten. */
  private publishProblems(): void {
    const now = new Map<string, SourceErrorReason>();
    for (const [key, p] of this.problems) {
      now.set(key, p.reason);
      if (this.reported.get(key) !== p.reason) this.emit(() => this.events.error(p.source, p.reason, p.detail));
    }
    this.reported = now;
  }

  /** Listener code must not break the poll loop. */
  private emit(call: () => void): void {
    try {
      call();
    } catch {
      // Swallowed on purpose: there is nowhere better to report a failing listener.
    }
  }
}

function identity(st: Stats): string {
  return `${st.dev}:${st.ino}`;
}

/**
 * Where the line being written at the end of a file begins, so following from
 * "the end" delivers that line whole instead of a fragment. A tail already
 * longer than the line limit starts just past the limit, so it is reported as oversize.
 */
async function startOfLastLine(fh: FileHandle, size: number, maxLineBytes: number, buf: Buffer): Promise<number> {
  const floor = Math.max(0, size - (maxLineBytes + 2));
  let end = size;
  while (end > floor) {
    const len = Math.min(buf.length, end - floor);
    const start = end - len;
    const { bytesRead } = await fh.read(buf, 0, len, start);
    const nl = buf.subarray(0, bytesRead).lastIndexOf(LF);
    if (nl !== -1) return start + nl + 1;
    end = start;
  }
  return floor;
}
