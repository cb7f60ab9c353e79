// What the three parts of one file follower share: the poller (file-follower.ts), the reader of each
// followed file (file-reader.ts) and rotation recovery (rotation-recovery.ts). The set of followed files
// and what is remembered about paths, the descriptor cap, the read buffers, the problems of the poll under
// way, and where lines and events go. The poller owns it; the other two only act on it.
import { createHash } from 'node:crypto';
import { DirectoryIndex } from './directory-index.js';
import { nodeFs, type FollowerFs, type FollowerHandle } from './follower-fs.js';
import { OpenFiles, openFilesCap } from './open-files.js';
import { newStream, type LineSink, type SourceErrorReason, type SourceEvents } from './line-sink.js';
import type { EnvelopeMode } from './envelope.js';
import { LineSplitter } from './line-splitter.js';
import { FINGERPRINT_BYTES, KnownFiles, readHead, sameStart } from './file-identity.js';
import type { Followed } from './followed-file.js';
import type { ReportProblem, Visible } from './pattern-scan.js';
import { familyBeside, familyOf, type Family } from './rotation-family.js';

/** Paths remembered with what they last named; a bound against globs over ever-new names. */
export const MAX_REMEMBERED_PATHS = 4096;
/** Starts of files let go of, kept (as digests, ~60 bytes each) to tell their compressed copies from generations never read. */
const MAX_READ_STARTS = 4096;

/** What a path named when a poll last confirmed it. */
export interface PathState {
  key: string;
  atMs: number;
  /** That file was deleted and let go of with nothing at the path: a file appearing there is a recreate. */
  deleted: boolean;
}

interface Problem {
  source: string;
  reason: SourceErrorReason;
  detail: string;
}

/** `deferred`: not read this poll (no descriptor to spare under the cap, or not found where it was): tried again next poll. */
export type DrainResult = 'eof' | 'more' | 'error' | 'deferred';

export interface ContextOptions {
  maxLineBytes: number;
  envelope?: EnvelopeMode | undefined;
  readChunkBytes: number;
  maxOpenFiles: number;
  /** Files a restored checkpoint holds: room in `known` for them, besides the usual bound. */
  restoredFiles: number;
  fs?: FollowerFs | undefined;
}

export class FollowerContext {
  readonly followed = new Map<string, Followed>();
  /** Files let go of that still exist, so one coming back is not read twice. */
  readonly known: KnownFiles;
  /** What each followed path last named: another file appearing there is a rotation. */
  readonly atPath = new Map<string, PathState>();
  /** Digests of the fingerprints of files read and let go of, with their lengths, oldest first (see wasRead). */
  private readonly readStarts = new Map<string, number>();
  /** Per source, the whole lines in the fingerprints of its files let go of: bytes and count (see lost). */
  private readonly lineSample = new Map<string, { bytes: number; lines: number }>();
  /** The family each path resolved to when it was last looked at (see familyAt). */
  private readonly families = new Map<string, Family>();
  /** Files matched by the patterns this poll; rotation recovery leaves these to the normal path. */
  visible = new Map<string, Visible>();
  /** One read buffer for every file: each chunk is handed on before the next read. */
  readonly buf: Buffer;
  /** Fingerprints are read here (a probe's head is a view of it until kept). */
  readonly scratch = Buffer.alloc(FINGERPRINT_BYTES);
  readonly openFiles: OpenFiles;
  /** Where files are by identity, listed once per directory and poll (closed files that moved, a restore). */
  readonly index: DirectoryIndex;
  readonly fs: FollowerFs;
  readonly maxLineBytes: number;
  private readonly envelope: EnvelopeMode | undefined;
  stopped = false;
  /** Set when a read stopped at the per-poll budget: the file had more, so the poll did not catch up. */
  budgetHit = false;
  /** Bytes the cycle under way has read, over all files. */
  readThisCycle = 0;
  /** Files found in the first cycle after a restore get the catch-up cap; so do the files resumed. */
  capNewFiles = false;
  /** Patterns the restored checkpoint followed: their files that it does not hold appeared while stopped. */
  readonly resumedSources = new Set<string>();
  /** Problems found during the current poll, keyed by what they are about. */
  private problems = new Map<string, Problem>();
  /** What was last reported per key, so a lasting problem is reported once, not every poll. */
  private reported = new Map<string, SourceErrorReason>();
  /** The cap was reported (once; again only when EMFILE lowers it). */
  private capReported = false;

  constructor(
    o: ContextOptions,
    private readonly sink: LineSink,
    readonly events: SourceEvents,
  ) {
    this.fs = o.fs ?? nodeFs;
    this.index = new DirectoryIndex(this.fs);
    this.buf = Buffer.allocUnsafe(o.readChunkBytes);
    this.maxLineBytes = o.maxLineBytes;
    this.envelope = o.envelope;
    // A closed file is reopened at its path, so only a file the last scan saw there may be closed.
    this.openFiles = new OpenFiles(openFilesCap(o.maxOpenFiles), (f) => f.end === undefined && this.visible.get(f.key)?.path === f.path);
    this.known = new KnownFiles(1024 + o.restoredFiles);
  }

  /** A poll begins: no problems found yet, nothing read, directories listed afresh. */
  beginCycle(): void {
    this.problems = new Map();
    this.budgetHit = false;
    this.readThisCycle = 0;
    this.index.clear();
  }

  /** Problems found so far in the poll under way (after it: in the last poll). */
  get problemCount(): number {
    return this.problems.size;
  }

  /** An arrow property, so the pattern scan can be handed it as it is. */
  readonly problem: ReportProblem = (key, source, reason, detail) => {
    if (!this.problems.has(key)) this.problems.set(key, { source, reason, detail });
  };

  /** Reports problems that are new or changed since the last poll; ones that went away are forgotten. */
  publishProblems(): void {
    const now = new Map<string, SourceErrorReason>();
    for (const [key, p] of this.problems) {
      now.set(key, p.reason);
      if (this.reported.get(key) !== p.reason) this.emit(() => this.events.error(p.source, p.reason, p.detail));
    }
    this.reported = now;
  }

  /** Listener code must not break the poll loop. */
  emit(call: () => void): void {
    try {
      call();
    } catch {
      // Swallowed on purpose: there is nowhere better to report a failing listener.
    }
  }

  /** A splitter for a new generation of the file at `path`: a stream of its own, whose format (and envelope) is detected anew. */
  newSplitter(source: string, path: string): LineSplitter {
    return new LineSplitter(this.maxLineBytes, this.sink, source, newStream(source, path), this.envelope);
  }

  /** Emits a partial last line that will never be completed. */
  flush(splitter: LineSplitter, source: string, path: string): void {
    if (splitter.pendingBytes > 0) this.emit(() => this.events.partialLine?.(source, path));
    splitter.flush();
  }

  follows(pred: (f: Followed) => boolean): boolean {
    for (const f of this.followed.values()) if (pred(f)) return true;
    return false;
  }

  /** The fingerprint of a followed file, so probing its family does not open it again. */
  readonly headOfFollowed = (key: string): Buffer | undefined => this.followed.get(key)?.head;

  /**
   * Where the rotated copies and generations of the file at `path` live. Resolved through the path (a
   * symlink's target); when nothing is at the path just then (rotated again between the open and this
   * look, its writer not reopened yet: a starved machine's common case), the family it had before, else
   * the path's own directory and name. A file followed with no family would never have the generations
   * rotated away before it looked for (one way the loaded CI run could have lost lines 2535–2678).
   */
  async familyAt(path: string): Promise<Family> {
    const found = await familyOf(path, this.fs);
    if (found !== undefined) {
      this.families.delete(path);
      this.families.set(path, found);
      if (this.families.size > MAX_REMEMBERED_PATHS) this.families.delete(this.families.keys().next().value as string);
      return found;
    }
    return this.families.get(path) ?? (await familyBeside(path, this.fs));
  }

  notePath(path: string, key: string, atMs: number): void {
    this.atPath.delete(path);
    this.atPath.set(path, { key, atMs, deleted: false });
    if (this.atPath.size > MAX_REMEMBERED_PATHS) this.atPath.delete(this.atPath.keys().next().value as string);
  }

  /**
   * Whether content starting with `head` was read, or is being read: a followed file, a file let go of
   * (still there, or deleted since) starts like it. A compressed generation is told by its decompressed
   * start: one that starts like nothing read was compressed before any read.
   */
  async wasRead(head: Buffer): Promise<boolean> {
    if (head.length === 0) return true;
    for (const f of [...this.followed.values()]) {
      if (f.head.length > 0 && sameStart(f.head, head)) return true;
      // Its fingerprint not whole yet: it may have been written since its last probe (an empty file at the
      // path, filled, rotated and compressed before the next poll). Its start now tells.
      if (f.head.length < FINGERPRINT_BYTES && f.fh !== undefined) {
        const now = await readHead(f.fh, this.scratch).catch(() => undefined);
        if (now !== undefined && now.length > f.head.length && sameStart(now, head)) return true;
      }
    }
    const lengths = new Set(this.readStarts.values());
    for (const n of lengths) if (head.length >= n && this.readStarts.has(startDigest(head.subarray(0, n)))) return true;
    return this.known.list().some((k) => k.head.length > 0 && sameStart(k.head, head));
  }

  /** Adds a file opened just now; it holds a descriptor from here on. */
  register(f: Followed): void {
    this.followed.set(f.key, f);
    this.openFiles.touch(f);
  }

  /**
   * `bytes` of a file at `path` were lost before the follower could hold it open (deleted or compressed
   * first): reported as skipped bytes, with the lines they held estimated from the source's line lengths.
   */
  lost(source: string, path: string, bytes: number): void {
    if (bytes <= 0) return;
    this.emit(() => this.events.skipped?.(source, bytes, 'unrecovered'));
    // The sample: fingerprints of the source's files let go of, and of those followed now.
    const s = { ...(this.lineSample.get(source) ?? { bytes: 0, lines: 0 }) };
    for (const f of this.followed.values()) if (f.source === source) addLines(s, f.head);
    if (s.lines === 0) return;
    const lines = Math.max(1, Math.round((bytes * s.lines) / s.bytes));
    this.emit(() => this.events.unrecoveredLines?.(source, path, lines));
  }

  /** Lets go of a followed file: its last partial line is flushed, its descriptor closed, and it is remembered if it still exists. */
  async retire(f: Followed): Promise<void> {
    this.followed.delete(f.key);
    // Compressed later (or now), its .gz holds lines already read (see wasRead). Kept apart from `known`:
    // that is by inode, and a freed inode's next file makes it forget the entry.
    if (f.head.length > 0) {
      this.readStarts.set(startDigest(f.head), f.head.length);
      if (this.readStarts.size > MAX_READ_STARTS) this.readStarts.delete(this.readStarts.keys().next().value as string);
    }
    const sample = this.lineSample.get(f.source) ?? { bytes: 0, lines: 0 };
    addLines(sample, f.head);
    this.lineSample.set(f.source, sample);
    // Nothing more will be read from it, so an unterminated last line is as complete as it gets.
    this.flush(f.splitter, f.source, f.path);
    await this.openFiles.park(f);
    if (f.end === 'deleted' || f.end === 'recreate') {
      const state = this.atPath.get(f.path);
      if (f.end === 'deleted' && state?.key === f.key) state.deleted = true;
    } else {
      // It still exists somewhere: if it comes back into view, resume instead of reading it again.
      this.known.remember(f.key, f.head, f.offset);
    }
  }

  /**
   * Opens a path for a file about to be followed, under the cap: the least recently active file is closed
   * first if needed. Undefined when no descriptor can be spared this poll (every open file is in use).
   * EMFILE/ENFILE means the process holds fewer descriptors than the cap assumed: the cap is lowered to
   * what is open now, and the open tried once more after closing one.
   */
  async openCapped(path: string): Promise<FollowerHandle | undefined> {
    if (!(await this.makeRoom())) return undefined;
    try {
      return await this.fs.open(path);
    } catch (err) {
      if (!isOutOfDescriptors(err)) throw err;
      this.openFiles.lower(this.openFiles.count - 1);
      this.emit(() => this.events.openFilesCapped?.(this.openFiles.cap, 'descriptors_exhausted'));
      if (!(await this.makeRoom())) return undefined;
      return await this.fs.open(path);
    }
  }

  async makeRoom(): Promise<boolean> {
    const full = this.openFiles.count >= this.openFiles.cap;
    const room = await this.openFiles.makeRoom();
    if (full && !this.capReported) {
      this.capReported = true;
      this.emit(() => this.events.openFilesCapped?.(this.openFiles.cap, 'cap_reached'));
    }
    return room;
  }
}

function startDigest(head: Buffer): string {
  return `${head.length}:${createHash('sha1').update(head).digest('base64')}`;
}

/** Adds the whole lines of a fingerprint to a sample of line lengths (for estimates of lines lost). */
function addLines(sample: { bytes: number; lines: number }, head: Buffer): void {
  const end = head.lastIndexOf(0x0a) + 1;
  for (let i = head.indexOf(0x0a); i !== -1 && i < end; i = head.indexOf(0x0a, i + 1)) sample.lines++;
  sample.bytes += end;
}

/** The process (EMFILE) or the system (ENFILE) is out of descriptors. */
function isOutOfDescriptors(err: unknown): boolean {
  const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
  return code === 'EMFILE' || code === 'ENFILE';
}
