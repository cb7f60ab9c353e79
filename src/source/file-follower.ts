import { DirectoryIndex } from './directory-index.js';
import { nodeFs, type FollowerFs, type FollowerHandle } from './follower-fs.js';
import { OpenFiles, openFilesCap } from './open-files.js';
import { newStream, type LineSink, type ResumeOutcome, type RotationKind, type SourceErrorReason, type SourceEvents } from './line-sink.js';
import type { EnvelopeMode } from './envelope.js';
import { LineSplitter } from './line-splitter.js';
import { errorMessage, fsErrorReason } from './fs-error-reason.js';
import { FINGERPRINT_BYTES, KnownFiles, identity, keep, readHead } from './file-identity.js';
import { alignResumedOffset, filesToResume, findFile, positionOf, resumedFollowed, type FilePosition, type FollowerState, type ResumeFrom } from './follower-resume.js';
import { nextLineStart, startOfLastLine } from './line-start.js';
import { accept, newFollowed, refills, wasReplaced, type Followed, type Probe } from './followed-file.js';
import { gapSource, generationsToRead, isCopyOf, startOffset, type GenerationScan } from './rotation-recovery.js';
import { expand, locate, type ReportProblem, type Visible } from './pattern-scan.js';
import { familyOf, openSibling, probeSiblings, type Family, type Sibling } from './rotation-family.js';

export { StdinFollower } from './stdin-follower.js';
export type { FilePosition, FollowerState, ResumeFrom } from './follower-resume.js';

export interface FollowOptions {
  patterns: string[];
  maxLineBytes: number;
  /** input.envelope, decided per file with `auto`; default `none`. */
  envelope?: EnvelopeMode;
  pollIntervalMs?: number; // default 250
  /** Where to begin in files that exist at startup; default 'end'. Files that appear later are always read from the start. */
  startAt?: 'end' | 'start';
  readChunkBytes?: number; // default 1 MiB
  /** Bytes read per file and poll, so one fast-growing file cannot starve the others; default 64 MiB. */
  maxReadBytesPerPoll?: number;
  /** Positions saved by a checkpoint: the files the patterns still reach resume where they were read to. */
  resume?: ResumeFrom;
  /**
   * Followed files held open at most (sources.maxOpenFiles); default 1024. Lowered at start so that
   * RESERVED_DESCRIPTORS stay free below the process's descriptor limit (open-files.ts).
   */
  maxOpenFiles?: number;
  /** The file-system calls; default Node's. A test slows or stalls them, or rotates files between them. */
  fs?: FollowerFs;
}

const DEFAULT_POLL_INTERVAL_MS = 250;
const DEFAULT_READ_CHUNK_BYTES = 1 << 20;
const DEFAULT_MAX_READ_BYTES_PER_POLL = 64 << 20;
const DEFAULT_MAX_OPEN_FILES = 1024;
/** Paths remembered with what they last named; a bound against globs over ever-new names. */
const MAX_REMEMBERED_PATHS = 4096;

/** What a path named when a poll last confirmed it. */
interface PathState {
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
type DrainResult = 'eof' | 'more' | 'error' | 'deferred';

/**
 * Follows the files matching glob patterns as they grow, by polling: globs are re-expanded every poll,
 * new bytes are read from a tracked offset, and rotations are handled without losing or repeating lines.
 *
 * A file is known by its inode and the first KiB of its content. A file renamed away, deleted or
 * replaced behind a symlink is drained to its end before it is let go of. A file truncated in place
 * (copytruncate) is read again from its start, and what had not been read yet is recovered from the
 * copy beside it. The file is the buffer: each poll reads at most `maxReadBytesPerPoll` per file through
 * one fixed read buffer, and only a partial last line (at most `maxLineBytes`) is held in memory.
 * Descriptors are bounded too: past `maxOpenFiles` the least recently active files are closed, and
 * reopened by identity when the poll's stat shows they changed.
 */
export class FileFollower {
  private readonly followed = new Map<string, Followed>();
  /** Files let go of that still exist, so one coming back is not read twice. */
  private readonly known: KnownFiles;
  /** What each followed path last named: another file appearing there is a rotation. */
  private readonly atPath = new Map<string, PathState>();
  /** Problems found during the current poll, keyed by what they are about. */
  private problems = new Map<string, Problem>();
  /** What was last reported per key, so a lasting problem is reported once, not every poll. */
  private reported = new Map<string, SourceErrorReason>();
  /** Files matched by the patterns this poll; rotation recovery leaves these to the normal path. */
  private visible = new Map<string, Visible>();
  private readonly buf: Buffer;
  private readonly scratch = Buffer.alloc(FINGERPRINT_BYTES);
  private readonly oneByte = Buffer.alloc(1);
  private readonly maxReadBytesPerPoll: number;
  private readonly openFiles: OpenFiles;
  /** Where files are by identity, listed once per directory and poll (closed files that moved, a restore). */
  private readonly index: DirectoryIndex;
  private readonly fs: FollowerFs;
  /** The cap was reported (once; again only when EMFILE lowers it). */
  private capReported = false;
  /**
   * Files seen at the first scan with start-at=end that could not be opened then (unreadable, or no
   * descriptor to spare), with their size then: once opened, they are read from where they ended when
   * first seen, as they would have been had they been readable at start.
   */
  private readonly endAtFirstSight = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private cycle: Promise<void> | undefined;
  private scanned = false;
  private started = false;
  private stopped = false;
  /** A checkpoint's positions, applied at the start of the first cycle. */
  private pendingResume: ResumeFrom | undefined;
  /** Patterns the restored checkpoint followed: their files that it does not hold appeared while stopped. */
  private readonly resumedSources = new Set<string>();
  /** Files whose checkpointed position was dropped as invalid: followed by start-at, as files new to this run. */
  private readonly untrusted: ReadonlySet<string>;
  /** Files of the checkpoint no configured pattern reached at the restore, kept in `known`: they get the catch-up cap too. */
  private readonly restoredKeys = new Set<string>();
  /** Files found in the first cycle after a restore get the catch-up cap; so do the files resumed. */
  private capNewFiles = false;
  private readonly catchUpCap: number;
  /** Set when a read stopped at the per-poll budget: the file had more, so the poll did not catch up. */
  private budgetHit = false;
  /** A tick came while a cycle ran: the next cycle starts as soon as this one ends, if it read anything. */
  private tickHeld = false;
  /** Bytes the cycle under way has read, over all files. */
  private readThisCycle = 0;
  private markCaughtUp!: () => void;
  /**
   * Resolves at the end of the first poll that read every followed file to its end (none stopped at the
   * per-poll budget). After a restore, that is when every line the previous run had counted is counted again.
   */
  readonly caughtUp: Promise<void>;
  /** The positions when stop() closed the files, for the final checkpoint. */
  private finalState: FollowerState | undefined;

  constructor(
    private readonly opts: FollowOptions,
    private readonly sink: LineSink,
    private readonly events: SourceEvents,
  ) {
    this.fs = opts.fs ?? nodeFs;
    this.index = new DirectoryIndex(this.fs);
    this.buf = Buffer.allocUnsafe(opts.readChunkBytes ?? DEFAULT_READ_CHUNK_BYTES);
    this.maxReadBytesPerPoll = opts.maxReadBytesPerPoll ?? DEFAULT_MAX_READ_BYTES_PER_POLL;
    // A closed file is reopened at its path, so only a file the last scan saw there may be closed.
    this.openFiles = new OpenFiles(openFilesCap(opts.maxOpenFiles ?? DEFAULT_MAX_OPEN_FILES), (f) => f.end === undefined && this.visible.get(f.key)?.path === f.path);
    this.pendingResume = opts.resume;
    this.untrusted = new Set(opts.resume?.untrusted ?? []);
    // Room for every file a restored checkpoint holds, besides the usual bound.
    this.known = new KnownFiles(1024 + (opts.resume?.state.files.length ?? 0));
    this.catchUpCap = opts.resume?.maxCatchUpBytes ?? Number.POSITIVE_INFINITY;
    this.caughtUp = new Promise((resolve) => {
      this.markCaughtUp = resolve;
    });
  }

  /** Followed files held open at most: sources.maxOpenFiles, lowered below the descriptor limit. */
  get openFileCap(): number {
    return this.openFiles.cap;
  }

  /** Followed files open now (the others are closed until they change). */
  get openFileCount(): number {
    return this.openFiles.count;
  }

  /** Files followed, open or not. */
  get followedCount(): number {
    return this.followed.size;
  }

  /** Resolves once the first scan is done (existing files opened at their start position). */
  async start(): Promise<void> {
    if (this.started) throw new Error('FileFollower already started');
    this.started = true;
    await this.pollOnce();
    if (this.stopped) return;
    this.timer = setInterval(() => this.tick(), this.opts.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS);
  }

  /**
   * Stops polling and closes every file; pending partial lines are not emitted. A cycle under way stops
   * reading at its next chunk but finishes what it started (a rotation found is fully registered), so
   * the positions kept for the final checkpoint are consistent.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    while (this.cycle) await this.cycle;
    this.finalState ??= this.capture();
    const all = [...this.followed.values()];
    this.followed.clear();
    await Promise.all(all.map((f) => this.openFiles.park(f)));
  }

  /**
   * Calls `take` with the positions at a moment no cycle is under way, so every line before each offset
   * was delivered and none after it: what the sink counted and these positions agree as long as `take`
   * reads both synchronously. After stop(), the positions the files were closed at.
   */
  async snapshot<T>(take: (state: FollowerState) => T): Promise<T> {
    while (this.cycle) await this.cycle;
    return take(this.finalState ?? this.capture());
  }

  private capture(): FollowerState {
    // Never started: the checkpoint's positions are still the truth.
    if (this.pendingResume !== undefined) return this.pendingResume.state;
    const files = [...this.followed.values()].map((f) => positionOf(f, this.visible.has(f.key)));
    return { patterns: [...this.opts.patterns], files, known: this.known.list() };
  }

  /** One scan and read cycle; waits for a cycle already running rather than overlapping it. */
  async pollOnce(): Promise<void> {
    while (this.cycle) await this.cycle;
    if (this.stopped) return;
    await this.runCycle();
  }

  private tick(): void {
    if (this.stopped) return;
    // A cycle never overlaps another. A tick that comes while one runs (a backlog, a file growing faster
    // than an interval's reading) runs as soon as it ends, and so does the next one after a ticked cycle
    // stopped at the per-poll budget: waiting for the next tick would leave the thread idle while lines
    // pile up (at 200k lines/s that idling is what made serve fall behind).
    if (this.cycle) {
      this.tickHeld = true;
      return;
    }
    void this.runCycle(true);
  }

  /** `ticked`: run by the poll timer, not by pollOnce() (whose caller decides when the next one runs). */
  private runCycle(ticked = false): Promise<void> {
    const cycle = this.cycleBody().finally(() => {
      this.cycle = undefined;
      // A held tick after a cycle that read nothing waits for the next tick: a cycle slow only because it
      // checks many idle files would otherwise run back to back.
      const more = (this.tickHeld && this.readThisCycle > 0) || (ticked && this.budgetHit);
      this.tickHeld = false;
      if (more) {
        // After the awaits of snapshot() and stop() that wait for this cycle: they take their turn first.
        setImmediate(() => this.tick());
      }
    });
    this.cycle = cycle;
    return cycle;
  }

  private async cycleBody(): Promise<void> {
    const firstScan = !this.scanned;
    const startAtEnd = firstScan && (this.opts.startAt ?? 'end') === 'end';
    this.scanned = true;
    this.problems = new Map();
    this.budgetHit = false;
    this.readThisCycle = 0;
    this.index.clear();
    const now = Date.now();
    try {
      const resume = this.pendingResume;
      if (resume !== undefined) {
        this.capNewFiles = true;
        await this.resumeFrom(resume);
        this.pendingResume = undefined;
      }
      const candidates = await expand(this.opts.patterns, this.problem, (pattern) => this.follows((f) => f.source === pattern), this.fs);
      const { visible, missing } = await locate(candidates, this.problem, this.fs);
      this.visible = visible;
      for (const f of this.followed.values()) {
        f.floor = f.seenSize;
        f.readThisPoll = 0;
      }
      // Files whose path moved on are drained first, so their last lines precede the new file's.
      for (const f of [...this.followed.values()]) {
        if (this.stopped) return;
        if (!visible.has(f.key) && this.followed.get(f.key) === f) await this.followDetached(f);
      }
      for (const f of [...this.followed.values()]) {
        if (this.stopped) return;
        const v = visible.get(f.key);
        if (v && this.followed.get(f.key) === f) await this.followLive(f, v, now);
      }
      for (const [key, v] of visible) {
        if (this.stopped) return;
        // A pattern the checkpoint followed: its files not in the checkpoint appeared since, read from their start.
        const resumed = this.resumedSources.has(v.source) && !this.untrusted.has(key);
        if (!this.followed.has(key)) await this.openNew(key, v, startAtEnd && !resumed, !firstScan || resumed, now);
      }
      // A configured path is missing; not a problem while its file is still drained after a rename.
      for (const c of missing) {
        if (!this.follows((f) => f.path === c.path)) this.problem(`file:${c.path}`, c.source, 'not_found', c.detail);
      }
    } catch (err) {
      // Every step catches its own errors; this only keeps a surprise from ending the poll loop.
      for (const pattern of this.opts.patterns) {
        this.problem(`pattern:${pattern}`, pattern, 'read_error', errorMessage(err));
      }
    }
    if (this.stopped) return;
    this.publishProblems();
    this.capNewFiles = false;
    if (!this.budgetHit) this.markCaughtUp();
  }

  /**
   * Re-opens the files of a checkpoint before the first poll. A file is resumed when a configured pattern
   * still reaches it, whichever pattern found it before (a path that became a glob over the same file
   * resumes exactly): its pattern is still configured, or a pattern now matches its path or the file
   * itself. Each is looked for by identity (dev:ino) at its path, then beside it (renamed while stopped,
   * checked by fingerprint too), and resumes at its checkpointed offset; the first read then finds a
   * truncation or in-place rewrite as it would live. A path whose file moved on is remembered as naming it
   * at the checkpoint's time, so the generations rotated away since are read from their siblings before
   * the file now at the path. The checkpoint's other files are remembered by identity: one that comes into
   * a pattern's reach later resumes from its offset too.
   */
  private async resumeFrom(r: ResumeFrom): Promise<void> {
    const configured = new Set(this.opts.patterns);
    for (const p of r.state.patterns) if (configured.has(p)) this.resumedSources.add(p);
    for (const k of r.state.known) this.known.remember(k.key, k.head, k.offset);
    // What the patterns reach now, to tell which checkpointed files are still followed (problems are the first poll's to report).
    const candidates = await expand(this.opts.patterns, () => undefined, () => true, this.fs);
    this.visible = (await locate(candidates, () => undefined, this.fs)).visible;
    const resumeAs = (e: FilePosition): FilePosition | undefined => {
      if (this.untrusted.has(e.key)) return undefined;
      if (configured.has(e.source)) return e;
      const v = this.visible.get(e.key);
      if (v !== undefined) return { ...e, source: v.source, path: e.state === 'live' ? v.path : e.path };
      const c = candidates.get(e.path);
      return c === undefined ? undefined : { ...e, source: c.source };
    };
    const entries = filesToResume(r.state, resumeAs);
    const resuming = new Set(entries.map((e) => e.key));
    for (const e of r.state.files) {
      if (resuming.has(e.key) || this.untrusted.has(e.key)) continue;
      this.known.remember(e.key, e.head, e.offset);
      this.restoredKeys.add(e.key);
    }
    for (const e of entries) {
      if (this.followed.has(e.key)) continue;
      if (e.state !== 'orphan' && !this.atPath.has(e.path)) this.notePath(e.path, e.key, r.savedAtMs);
      const found = (await this.openFiles.makeRoom()) ? await findFile(e, this.scratch, this.index, this.fs) : 'unopenable';
      if (found === 'unopenable') {
        // At its path but not readable now (permissions, or no descriptor to spare): when it can be opened, it resumes from here.
        this.known.remember(e.key, e.head, e.offset);
        this.restoredKeys.add(e.key);
        continue;
      }
      if (found === undefined) {
        this.emit(() => this.events.resumed?.(e.source, e.path, 'gone', e.offset));
        continue;
      }
      const outcome: ResumeOutcome = found.path === e.path ? 'at_path' : 'moved';
      const f = await resumedFollowed(e, found, r.savedAtMs, this.newSplitter(e.source, e.path), this.fs);
      if (await alignResumedOffset(f, e, this.opts.maxLineBytes, this.buf, this.scratch)) {
        this.emit(() => this.events.offsetDistrusted?.(e.source, found.path, e.offset, f.offset));
      }
      this.register(f);
      this.emit(() => this.events.resumed?.(e.source, found.path, outcome, e.offset));
    }
  }

  /** A followed file still matched by a pattern (maybe under a new name, after a rename within the glob). */
  private async followLive(f: Followed, v: Visible, now: number): Promise<void> {
    f.path = v.path;
    f.end = undefined;
    f.idlePolls = 0;
    // Read only when the scan's stat says there may be something new (a closed file is only then opened again).
    if (this.mayHaveChanged(f, v)) await this.readFile(f);
    f.checkedAtMs = now;
    this.notePath(f.path, f.key, now);
  }

  /** Whether a file may hold bytes not read, or new content: grown, shrunk, written since its last probe, or never fully probed. */
  private mayHaveChanged(f: Followed, v: Visible): boolean {
    return f.capCheck || v.size !== f.seenSize || v.mtimeMs !== f.mtimeMs || f.offset < v.size || f.head.length < Math.min(v.size, FINGERPRINT_BYTES);
  }

  private notePath(path: string, key: string, atMs: number): void {
    this.atPath.delete(path);
    this.atPath.set(path, { key, atMs, deleted: false });
    if (this.atPath.size > MAX_REMEMBERED_PATHS) this.atPath.delete(this.atPath.keys().next().value as string);
  }

  /**
   * A followed file no longer visible under its path: renamed away (rotation), deleted, replaced behind
   * a symlink, or an orphan read for recovery. It is drained, since a writer may still append until it
   * reopens, and closed once its path names another file (or it is deleted) and a poll found nothing new.
   * A file closed for the cap is first found again by identity; one found nowhere in two polls is let go
   * of (deleted while closed: what it got after the last poll that read it is lost).
   */
  private async followDetached(f: Followed): Promise<void> {
    if (f.fh === undefined) {
      const reopened = await this.reopenMoved(f);
      if (reopened === 'deferred') return;
      if (reopened === 'gone') {
        f.idlePolls++;
        if (f.idlePolls >= 2) {
          f.end = 'deleted';
          await this.retire(f);
        }
        return;
      }
      f.idlePolls = 0;
    }
    // The end is looked for before draining, so that a drain finding nothing new happened after the writer
    // had already moved on to the new file: only then is the old file done with.
    if (f.end === undefined || f.end === 'deleted') {
      const end = await this.detachedEnd(f);
      if (end !== undefined && end !== f.end) {
        f.end = end;
        f.idlePolls = 0;
        if (end !== 'deleted') this.emit(() => this.events.rotated?.(f.source, f.path, end));
      }
    }
    const result = await this.readFile(f);
    if (this.stopped || this.followed.get(f.key) !== f || f.end === undefined) return;
    f.idlePolls = result === 'eof' && f.readThisPoll === 0 ? f.idlePolls + 1 : 0;
    // A deleted file nobody replaced yet gets one more poll: its writer may not have reopened.
    if (f.idlePolls >= (f.end === 'deleted' ? 2 : 1)) await this.retire(f);
  }

  /** Whether a detached file is done with, and how: its path now names another file, or it was deleted. */
  private async detachedEnd(f: Followed): Promise<RotationKind | 'deleted' | undefined> {
    try {
      const st = await this.fs.stat(f.path).catch(() => undefined);
      const fh = f.fh;
      const deleted = fh === undefined ? false : (await fh.stat()).nlink === 0;
      if (st && identity(st) !== f.key) {
        if ((await this.fs.lstat(f.path).catch(() => undefined))?.isSymbolicLink()) return 'symlink';
        return deleted ? 'recreate' : 'rename';
      }
      return deleted ? 'deleted' : undefined;
    } catch (err) {
      this.problem(`read:${f.path}`, f.source, fsErrorReason(err), `${f.path}: ${errorMessage(err)}`);
      return undefined;
    }
  }

  private async retire(f: Followed): Promise<void> {
    this.followed.delete(f.key);
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

  /** Adds a file opened just now; it holds a descriptor from here on. */
  private register(f: Followed): void {
    this.followed.set(f.key, f);
    this.openFiles.touch(f);
  }

  /**
   * Opens a path for a file about to be followed, under the cap: the least recently active file is closed
   * first if needed. Undefined when no descriptor can be spared this poll (every open file is in use).
   * EMFILE/ENFILE means the process holds fewer descriptors than the cap assumed: the cap is lowered to
   * what is open now, and the open tried once more after closing one.
   */
  private async openCapped(path: string): Promise<FollowerHandle | undefined> {
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

  private async makeRoom(): Promise<boolean> {
    const full = this.openFiles.count >= this.openFiles.cap;
    const room = await this.openFiles.makeRoom();
    if (full && !this.capReported) {
      this.capReported = true;
      this.emit(() => this.events.openFilesCapped?.(this.openFiles.cap, 'cap_reached'));
    }
    return room;
  }

  /** A closed file at its path, opened again if it is still the same file there (the read that follows probes its content). */
  private async reopenAtPath(f: Followed): Promise<'ok' | 'deferred'> {
    let fh: FollowerHandle | undefined;
    try {
      fh = await this.openCapped(f.path);
    } catch (err) {
      this.problem(`read:${f.path}`, f.source, fsErrorReason(err), `${f.path}: ${errorMessage(err)}`);
      return 'deferred';
    }
    if (fh === undefined) return 'deferred';
    const st = await fh.stat().catch(() => undefined);
    if (st === undefined || identity(st) !== f.key) {
      // Replaced since the scan's stat: the next poll sees the rotation.
      await fh.close().catch(() => undefined);
      return 'deferred';
    }
    f.fh = fh;
    this.openFiles.touch(f);
    return 'ok';
  }

  /** A closed file no longer at its path, found again by identity (renamed by a rotation) and opened. */
  private async reopenMoved(f: Followed): Promise<'ok' | 'deferred' | 'gone'> {
    if (!(await this.makeRoom())) return 'deferred';
    const found = await findFile({ path: f.path, key: f.key, head: f.head, family: f.family, state: f.end === 'orphan' ? 'orphan' : 'detached' }, this.scratch, this.index, this.fs);
    if (found === 'unopenable') return 'deferred';
    if (found === undefined) return 'gone';
    f.fh = found.fh;
    this.openFiles.touch(f);
    return 'ok';
  }

  private async openNew(seen: string, v: Visible, fromEnd: boolean, checkCopies: boolean, now: number): Promise<void> {
    let fh: FollowerHandle | undefined;
    try {
      fh = await this.openCapped(v.path);
    } catch (err) {
      if (fromEnd) this.rememberEndAtFirstSight(seen, v.size);
      this.problem(`file:${v.path}`, v.source, fsErrorReason(err), `${v.path}: ${errorMessage(err)}`);
      return;
    }
    if (fh === undefined) {
      if (fromEnd) this.rememberEndAtFirstSight(seen, v.size);
      return;
    }
    let key: string;
    let size: number;
    let head: Buffer;
    let offset = 0;
    try {
      const st = await fh.stat();
      key = identity(st);
      size = st.size;
      head = keep(await readHead(fh, this.scratch));
      const knownOffset = key === seen ? this.known.offsetOf(key, head, size) : undefined;
      if (knownOffset !== undefined) {
        // Read before and let go of, or a checkpointed file no pattern reached at the restore: it goes on from there.
        offset = knownOffset;
        this.known.forget(key);
        fromEnd = false;
        checkCopies = false;
      } else if (fromEnd) {
        offset = await startOfLastLine(fh, st.size, this.opts.maxLineBytes, this.buf);
      } else if (key === seen) {
        const atStart = this.endAtFirstSight.get(key);
        if (atStart !== undefined) {
          // Seen at start (start-at=end) but not readable then: the lines it held then are skipped, as they would have been.
          this.endAtFirstSight.delete(key);
          offset = size >= atStart ? await startOfLastLine(fh, atStart, this.opts.maxLineBytes, this.buf) : 0;
          fromEnd = true;
        }
      }
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
    if (key !== seen) {
      if (fromEnd) {
        await fh.close().catch(() => undefined);
        return;
      }
      // The file seen at this path a moment ago was rotated away (or deleted) before it could be opened. It
      // was never read: it is found beside the path and followed from its start, first. The file opened is
      // the one the path names now, and is followed at once, not left to the next poll: by then it may be
      // rotated away and deleted or compressed, and only the descriptor held now could still drain it.
      await this.followMoved(seen, v, now);
      if (this.stopped || this.followed.has(key)) {
        await fh.close().catch(() => undefined);
        return;
      }
    }
    if (!fromEnd && offset === 0) offset = startOffset({ key, head, size }, checkCopies, this.known, this.followed.values());
    const f = newFollowed({
      key,
      path: v.path,
      source: v.source,
      fh,
      family: await familyOf(v.path, this.fs),
      offset,
      head,
      size,
      checkedAtMs: now,
      capCheck: this.capNewFiles && (this.resumedSources.has(v.source) || this.restoredKeys.has(key)),
      splitter: this.newSplitter(v.source, v.path),
    });
    if (this.stopped || this.followed.has(key)) {
      await fh.close().catch(() => undefined);
      return;
    }
    this.register(f);
    this.openFiles.pin(f);
    try {
      const before = this.atPath.get(v.path);
      this.notePath(v.path, key, now);
      this.emit(() => this.events.opened?.(v.source, v.path));
      if (before !== undefined && before.key !== key && !fromEnd) {
        // The path named another file: generations rotated away since it was last seen there come first.
        if (before.deleted) this.emit(() => this.events.rotated?.(v.source, v.path, 'recreate'));
        await this.recoverBetween(before, f, v.source, v.path);
      }
      await this.readFile(f);
    } finally {
      this.openFiles.unpin(f);
    }
  }

  private rememberEndAtFirstSight(key: string, size: number): void {
    this.endAtFirstSight.set(key, size);
    if (this.endAtFirstSight.size > MAX_REMEMBERED_PATHS) this.endAtFirstSight.delete(this.endAtFirstSight.keys().next().value as string);
  }

  /** Follows a file seen at `v.path` and rotated to a sibling before it was opened, as one renamed away. */
  private async followMoved(key: string, v: Visible, now: number): Promise<void> {
    const family = await familyOf(v.path, this.fs);
    if (!family) return;
    const siblings = await probeSiblings(family, '', this.scratch, this.headOfFollowed, this.fs);
    const s = siblings.find((c) => c.key === key);
    if (s === undefined || this.stopped || this.followed.has(key) || !(await this.makeRoom())) return;
    const opened = await openSibling(s, family, this.scratch, this.fs);
    if (opened === undefined) return;
    if (this.stopped || this.followed.has(key)) {
      await opened.fh.close().catch(() => undefined);
      return;
    }
    const f = newFollowed({
      key,
      path: v.path,
      source: v.source,
      fh: opened.fh,
      family,
      offset: startOffset({ key, head: s.head, size: s.size }, true, this.known, this.followed.values()),
      head: s.head,
      size: s.size,
      checkedAtMs: now,
      capCheck: this.capNewFiles && this.resumedSources.has(v.source),
      splitter: this.newSplitter(v.source, v.path),
    });
    const before = this.atPath.get(v.path);
    this.register(f);
    this.openFiles.pin(f);
    try {
      this.notePath(v.path, key, now);
      this.emit(() => this.events.opened?.(v.source, opened.path));
      // Generations between the file the path named before and this one rotated away unseen as well.
      if (before !== undefined && before.key !== key) await this.recoverBetween(before, f, v.source, v.path);
      await this.readFile(f);
    } finally {
      this.openFiles.unpin(f);
    }
  }

  /** The generations that were at `path` after `before` and before `f` (several rotations in one poll), read from their siblings. */
  private async recoverBetween(before: PathState, f: Followed, source: string, path: string): Promise<void> {
    if (!f.family) return;
    const scan: GenerationScan = {
      family: f.family,
      source,
      path,
      sinceMs: before.atMs,
      heads: [f.head],
      anchor: (s) => s.key === before.key,
    };
    await this.recoverGenerations(scan, 'rename');
  }

  /** The fingerprint of a followed file, so probing its family does not open it again. */
  private readonly headOfFollowed = (key: string): Buffer | undefined => this.followed.get(key)?.head;

  /**
   * Reads what is new in a followed file. The file is probed (size and fingerprint) before reading and
   * after every chunk: a file that shrank or whose first bytes changed was truncated or rewritten in
   * place, and is read again from its start after recovering what it lost (see restart).
   */
  private async readFile(f: Followed): Promise<DrainResult> {
    if (f.fh === undefined && (await this.reopenAtPath(f)) === 'deferred') return 'deferred';
    this.openFiles.pin(f);
    try {
      return await this.readOpen(f);
    } finally {
      this.openFiles.unpin(f);
    }
  }

  private async readOpen(f: Followed): Promise<DrainResult> {
    const before = await this.probe(f);
    if (before === undefined) return 'error';
    if (wasReplaced(f, before) || (await this.holeUnder(f))) await this.restart(f, before);
    else if (refills(f, before)) await this.refilled(f, before);
    else accept(f, before);
    let budget = this.maxReadBytesPerPoll;
    try {
      if (f.capCheck) {
        f.capCheck = false;
        await this.capCatchUp(f, before.size);
      }
      while (budget > 0 && !this.stopped) {
        const fh = f.fh;
        // Closed under it (rotation recovery needed the descriptor): opened again on its next poll.
        if (fh === undefined) return 'deferred';
        const { bytesRead } = await fh.read(this.buf, 0, Math.min(this.buf.length, budget), f.offset);
        if (bytesRead === 0) return 'eof';
        budget -= bytesRead;
        const after = await this.probe(f);
        if (after === undefined) return 'error';
        if (wasReplaced(f, after)) {
          // Truncated while the chunk was read: the chunk is old content if the new content is too short
          // to have supplied it; otherwise it is dropped (the copy, if any, holds the old bytes).
          if (after.size < f.offset + bytesRead) this.take(f, bytesRead);
          await this.restart(f, after);
          continue;
        }
        if (refills(f, after)) {
          // Read again after the generations it may come after (their reads reuse the buffer).
          await this.refilled(f, after);
          continue;
        }
        accept(f, after);
        this.take(f, bytesRead);
      }
    } catch (err) {
      this.problem(`read:${f.path}`, f.source, 'read_error', `${f.path}: ${errorMessage(err)}`);
      return 'error';
    }
    if (budget <= 0) this.budgetHit = true;
    return 'more';
  }

  /**
   * After a restore: a file more than the catch-up cap behind its end resumes at the first line start
   * within the cap of its end; what is passed over (a held partial line included) is reported as skipped.
   */
  private async capCatchUp(f: Followed, size: number): Promise<void> {
    if (size - f.offset <= this.catchUpCap || f.fh === undefined) return;
    const from = f.offset - f.splitter.pendingBytes;
    const target = size - this.catchUpCap;
    // A line start is looked for within a line's length; past that, the line is dropped to its end.
    const limit = Math.min(size, target + this.opts.maxLineBytes + 2);
    const start = await nextLineStart(f.fh, target, limit, this.buf);
    f.splitter = this.newSplitter(f.source, f.path);
    if (start === undefined) f.splitter.skipToNextLine();
    f.offset = start ?? limit;
    f.lastByte = undefined;
    const bytes = f.offset - from;
    this.emit(() => this.events.skipped?.(f.source, bytes, 'catch_up_cap'));
  }

  /**
   * A file that starts with a hole (truncated once under a writer that does not append, as Caddy's log)
   * keeps starting with NULs when it is truncated again, and the writer's next line lands past what was
   * read: size and fingerprint look like an append. What tells it is the byte last read, now a NUL.
   */
  private async holeUnder(f: Followed): Promise<boolean> {
    if (f.head[0] !== 0 || f.lastByte === undefined || f.lastByte === 0 || f.offset === 0 || f.fh === undefined) return false;
    try {
      const { bytesRead } = await f.fh.read(this.oneByte, 0, 1, f.offset - 1);
      return bytesRead === 0 || this.oneByte[0] === 0;
    } catch {
      return false; // the read of the file itself reports it
    }
  }

  private take(f: Followed, bytes: number): void {
    if (bytes > 0) f.lastByte = this.buf[bytes - 1];
    f.offset += bytes;
    f.readThisPoll += bytes;
    this.readThisCycle += bytes;
    if (f.offset > f.seenSize) f.seenSize = f.offset;
    this.openFiles.touch(f);
    f.splitter.push(this.buf.subarray(0, bytes));
  }

  private async probe(f: Followed): Promise<Probe | undefined> {
    const fh = f.fh;
    if (fh === undefined) return undefined;
    try {
      const { size, mtimeMs } = await fh.stat();
      // Not written since the last probe, and the fingerprint already complete: no need to read it again.
      if (size === f.seenSize && mtimeMs === f.mtimeMs && f.head.length === Math.min(size, FINGERPRINT_BYTES)) {
        return { size, mtimeMs, head: f.head };
      }
      return { size, mtimeMs, head: await readHead(fh, this.scratch) };
    } catch (err) {
      this.problem(`read:${f.path}`, f.source, 'read_error', `${f.path}: ${errorMessage(err)}`);
      return undefined;
    }
  }

  /**
   * The followed file was truncated or rewritten in place. What had not been read yet is recovered from
   * a copy of the old content beside it (copytruncate), then any generation rotated away between two
   * polls, and the file is read again from its start. Bytes known to be lost are reported as skipped.
   */
  private async restart(f: Followed, p: Probe): Promise<void> {
    // The probe's head is a view of the scratch buffer, which the sibling probes below reuse.
    const newHead = keep(p.head);
    const newSize = p.size;
    const newMtime = p.mtimeMs;
    const knownEnd = f.seenSize;
    const oldHead = f.head;
    const oldSplitter = f.splitter;
    f.splitter = this.newSplitter(f.source, f.path);
    const siblings = f.family ? await probeSiblings(f.family, f.key, this.scratch, this.headOfFollowed, this.fs) : [];
    // Copies of the old content (same start); the longest one holding bytes not read yet fills the gap.
    const copies = siblings.filter((s) => isCopyOf(s, oldHead));
    const copy = gapSource(copies, f.offset);
    let recoveredTo = f.offset;
    if (copy !== undefined && copy.size > f.offset && (await this.readOrphan(copy, f.family, f.source, f.path, f.offset, oldSplitter))) {
      recoveredTo = copy.size;
    } else {
      this.flush(oldSplitter, f.source, f.path);
    }
    // Copies not read from hold content already delivered: a glob reaching them must not read them again.
    for (const c of copies) if (c !== copy && !this.followed.has(c.key)) this.known.remember(c.key, c.head, c.size);
    const kind: RotationKind = copies.length > 0 ? 'copytruncate-recovered' : 'truncate';
    this.emit(() => this.events.rotated?.(f.source, f.path, kind));
    if (knownEnd > recoveredTo) this.emit(() => this.events.skipped?.(f.source, knownEnd - recoveredTo, 'truncated'));
    // A sibling starting like the new content is a copy of what is about to be read from the file itself
    // (another copytruncate since the probe): left alone, it is the gap source if that one is truncated too.
    // The generations since are the ones newer than the copy of the old content, in its naming scheme.
    if (f.family) await this.readGenerations(afterTruncation(f, f.family, oldHead, newHead), kind, siblings);
    f.offset = 0;
    f.head = newHead;
    // Left empty: remember what it held, for when content appears (see refilled); only a file with
    // siblings to look at needs it.
    f.emptiedFrom = newHead.length > 0 || f.family === undefined ? undefined : oldHead.length > 0 ? oldHead : f.emptiedFrom;
    f.seenSize = Math.max(newSize, newHead.length);
    f.mtimeMs = newMtime;
    // New content: a copy of it made from now on can be of any length.
    f.floor = 0;
  }

  /**
   * A file a truncation left empty has content again: appended, or copied and truncated once more since
   * the last poll, with a generation that was only ever in that copy. Nothing at the path tells the two
   * apart (an empty file has no fingerprint); the siblings do: such a generation is newer than the copy
   * of the content before the first truncation, and starts like neither.
   */
  private async refilled(f: Followed, p: Probe): Promise<void> {
    const emptied = f.emptiedFrom as Buffer;
    f.emptiedFrom = undefined;
    // The probe's head is a view of the scratch buffer, which the sibling probes reuse.
    const head = keep(p.head);
    // Set only for a file with a family (restart).
    const family = f.family as Family;
    const siblings = await probeSiblings(family, f.key, this.scratch, this.headOfFollowed, this.fs);
    await this.readGenerations(afterTruncation(f, family, emptied, head), 'copytruncate-recovered', siblings);
    accept(f, { ...p, head });
  }

  /** A new file at a path that named another one: read the generations rotated away in between, unseen. */
  private async recoverGenerations(scan: GenerationScan, kind: RotationKind): Promise<void> {
    const siblings = await probeSiblings(scan.family, '', this.scratch, this.headOfFollowed, this.fs);
    await this.readGenerations(scan, kind, siblings);
  }

  /** Reads the generations among the siblings that rotated away unseen (see generationsToRead); counts those lost. */
  private async readGenerations(scan: GenerationScan, kind: RotationKind, siblings: Sibling[]): Promise<void> {
    const { todo, lost } = generationsToRead(scan, siblings, (key) => this.followed.has(key) || this.visible.has(key), this.known);
    for (let i = 0; i < lost; i++) this.emit(() => this.events.rotated?.(scan.source, scan.path, 'unrecovered'));
    // Stopping does not cut this short: each generation is registered (and reads stop at once), so the
    // final checkpoint holds them all.
    for (const { s, from } of todo) {
      if (this.followed.has(s.key)) continue;
      this.emit(() => this.events.rotated?.(scan.source, scan.path, kind));
      const read = await this.readOrphan(s, scan.family, scan.source, scan.path, from, this.newSplitter(scan.source, scan.path));
      if (!read) this.emit(() => this.events.rotated?.(scan.source, scan.path, 'unrecovered'));
    }
  }

  /**
   * Reads a sibling from `from` for a source, as a followed file of its own that is let go of once a
   * poll finds nothing new in it. A sibling already followed (a glob matches it) is rewound. False when
   * it could not be opened (gone since it was probed, or no descriptor to spare).
   */
  private async readOrphan(s: Sibling, family: Family | undefined, source: string, path: string, from: number, splitter: LineSplitter): Promise<boolean> {
    const existing = this.followed.get(s.key);
    if (existing !== undefined) {
      if (from < existing.offset) {
        this.flush(existing.splitter, existing.source, existing.path);
        existing.offset = from;
        existing.splitter = splitter;
      } else {
        this.flush(splitter, source, path);
      }
      await this.readFile(existing);
      return true;
    }
    const opened = (await this.makeRoom()) ? await openSibling(s, family, this.scratch, this.fs) : undefined;
    if (opened === undefined) {
      this.flush(splitter, source, path);
      return false;
    }
    this.known.forget(s.key);
    const o = newFollowed({
      key: s.key,
      path: opened.path,
      source,
      fh: opened.fh,
      family: undefined,
      offset: from,
      head: s.head,
      size: s.size,
      checkedAtMs: Date.now(),
      capCheck: this.capNewFiles && this.resumedSources.has(source),
      end: 'orphan',
      splitter,
    });
    this.register(o);
    await this.readFile(o);
    return true;
  }

  /** A splitter for a new generation of the file at `path`: a stream of its own, whose format (and envelope) is detected anew. */
  private newSplitter(source: string, path: string): LineSplitter {
    return new LineSplitter(this.opts.maxLineBytes, this.sink, source, newStream(source, path), this.opts.envelope);
  }

  /** Emits a partial last line that will never be completed. */
  private flush(splitter: LineSplitter, source: string, path: string): void {
    if (splitter.pendingBytes > 0) this.emit(() => this.events.partialLine?.(source, path));
    splitter.flush();
  }

  private follows(pred: (f: Followed) => boolean): boolean {
    for (const f of this.followed.values()) if (pred(f)) return true;
    return false;
  }

  /** An arrow property, so the pattern scan can be handed it as it is. */
  private readonly problem: ReportProblem = (key, source, reason, detail) => {
    if (!this.problems.has(key)) this.problems.set(key, { source, reason, detail });
  };

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

/** The process (EMFILE) or the system (ENFILE) is out of descriptors. */
function isOutOfDescriptors(err: unknown): boolean {
  const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
  return code === 'EMFILE' || code === 'ENFILE';
}

/**
 * Where the generations of a file truncated in place are looked for: siblings newer than the copy of the
 * content it held (`oldHead`), starting like neither that content nor the one it holds now (`newHead`).
 */
function afterTruncation(f: Followed, family: Family, oldHead: Buffer, newHead: Buffer): GenerationScan {
  return { family, source: f.source, path: f.path, sinceMs: f.checkedAtMs, heads: [oldHead, newHead], anchor: (s) => isCopyOf(s, oldHead) };
}
