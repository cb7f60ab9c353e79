import type { FollowerFs, FollowerHandle } from './follower-fs.js';
import type { LineSink, ResumeOutcome, SourceEvents } from './line-sink.js';
import type { EnvelopeMode } from './envelope.js';
import { errorMessage, fsErrorReason } from './fs-error-reason.js';
import { FINGERPRINT_BYTES, identity, keep, readHead } from './file-identity.js';
import { alignResumedOffset, filesToResume, findFile, positionOf, resumedFollowed, type FilePosition, type FollowerState, type ResumeFrom } from './follower-resume.js';
import { startOfLastLine } from './line-start.js';
import { newFollowed, type Followed } from './followed-file.js';
import { FollowerContext, MAX_REMEMBERED_PATHS } from './follower-context.js';
import { FileReader } from './file-reader.js';
import { RotationRecovery } from './rotation-recovery.js';
import { startOffset } from './rotation-evidence.js';
import fg from 'fast-glob';
import { expand, locate, type Candidate, type Visible } from './pattern-scan.js';
import { statDeferred } from './stat-schedule.js';
import { DirectoryWatch, type DirectoryMode, type WatchMode } from './directory-watch.js';
import { dirname, resolve } from 'node:path';

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
  /**
   * How long a deleted file with nothing at its path is still held open once a drain found nothing new
   * (its writer may not have reopened yet); default 30 s. A file at the path again ends the hold.
   */
  deletedHoldMs?: number;
  /** The file-system calls; default Node's. A test slows or stalls them, or rotates files between them. */
  fs?: FollowerFs;
  /**
   * sources.watch: `auto` watches the followed files' directories (directory-watch.ts) so idle files are
   * not stat-ed and globs not listed every poll; `off` (the default here; serve's config default is auto) polls only.
   */
  watch?: WatchMode;
  /** With watching: how long an unchanged file or glob goes without a stat or a listing anyway; default 10 s. */
  rescanIntervalMs?: number;
}

const DEFAULT_POLL_INTERVAL_MS = 250;
const DEFAULT_READ_CHUNK_BYTES = 1 << 20;
const DEFAULT_MAX_READ_BYTES_PER_POLL = 64 << 20;
const DEFAULT_MAX_OPEN_FILES = 1024;
const DEFAULT_RESCAN_INTERVAL_MS = 10_000;

/** Until when scheduled polls may rest, while the directory watch's change count stays as it was. */
interface Rest {
  /** The poll that left it: a clock stepped back before it ends the rest (a rescan must not wait for the clock). */
  atMs: number;
  untilMs: number;
  changes: number;
}
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
  /** The set of followed files and what the reader and rotation recovery share with the poller. */
  private readonly ctx: FollowerContext;
  private readonly reader: FileReader;
  private readonly recovery: RotationRecovery;
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
  /** A checkpoint's positions, applied at the start of the first cycle. */
  private pendingResume: ResumeFrom | undefined;
  /** Files whose checkpointed position was dropped as invalid: followed by start-at, as files new to this run. */
  private readonly untrusted: ReadonlySet<string>;
  /** Files of the checkpoint no configured pattern reached at the restore, kept in `known`: they get the catch-up cap too. */
  private readonly restoredKeys = new Set<string>();
  /** When the last scheduled cycle began: how far apart polls really come, for the stat schedule. */
  private lastScheduledMs: number | undefined;
  /** A tick came while a cycle ran: the next cycle starts as soon as this one ends, if it read anything. */
  private tickHeld = false;
  private markCaughtUp!: () => void;
  /**
   * Resolves at the end of the first poll that read every followed file to its end (none stopped at the
   * per-poll budget). After a restore, that is when every line the previous run had counted is counted again.
   */
  readonly caughtUp: Promise<void>;
  /** The positions when stop() closed the files, for the final checkpoint. */
  private finalState: FollowerState | undefined;
  /** What the directories said since the last poll (nothing, with sources.watch off). */
  private readonly watch: DirectoryWatch;
  /**
   * Left by a poll after which the next ones have nothing to do unless a directory reports a change (every
   * file watched, idle and read to its end, every listing kept): until `untilMs` (the first rescan due),
   * while the watch's change count stays `changes`, a scheduled poll rests instead of walking every file.
   */
  private rest: Rest | undefined;
  /** Scheduled polls that rested (nothing to do): how idle the follower is; tests and benchmarks read it. */
  restedPolls = 0;

  constructor(
    private readonly opts: FollowOptions,
    sink: LineSink,
    events: SourceEvents,
  ) {
    this.ctx = new FollowerContext(
      {
        maxLineBytes: opts.maxLineBytes,
        envelope: opts.envelope,
        readChunkBytes: opts.readChunkBytes ?? DEFAULT_READ_CHUNK_BYTES,
        maxOpenFiles: opts.maxOpenFiles ?? DEFAULT_MAX_OPEN_FILES,
        restoredFiles: opts.resume?.state.files.length ?? 0,
        fs: opts.fs,
      },
      sink,
      events,
    );
    const readerOptions = {
      maxReadBytesPerPoll: opts.maxReadBytesPerPoll ?? DEFAULT_MAX_READ_BYTES_PER_POLL,
      catchUpCap: opts.resume?.maxCatchUpBytes ?? Number.POSITIVE_INFINITY,
    };
    // The reader hands truncations to recovery, and recovery reads what it finds through the reader.
    this.recovery = new RotationRecovery(this.ctx, (f) => this.reader.read(f), opts.deletedHoldMs);
    this.reader = new FileReader(this.ctx, readerOptions, this.recovery);
    this.watch = new DirectoryWatch(opts.watch ?? 'off', opts.rescanIntervalMs ?? DEFAULT_RESCAN_INTERVAL_MS, this.ctx.fs, {
      fallback: (dir, reason, detail) => this.ctx.emit(() => events.watchFallback?.(dir, reason, detail)),
    });
    this.pendingResume = opts.resume;
    this.untrusted = new Set(opts.resume?.untrusted ?? []);
    this.caughtUp = new Promise((resolve) => {
      this.markCaughtUp = resolve;
    });
  }

  /** Followed files held open at most: sources.maxOpenFiles, lowered below the descriptor limit. */
  get openFileCap(): number {
    return this.ctx.openFiles.cap;
  }

  /** Followed files open now (the others are closed until they change). */
  get openFileCount(): number {
    return this.ctx.openFiles.count;
  }

  /**
   * Whether the file with this identity (dev:ino) is followed and held open now: its lines are drained
   * through the descriptor whatever happens to its name. A file only peeked at (a sibling's fingerprint
   * read while looking for generations) is not. The starvation harness tells by it a file lost under the
   * follower (a bug) from one compressed or deleted before the follower held it (counted as unrecovered).
   */
  holdsOpen(key: string): boolean {
    return this.ctx.followed.get(key)?.fh !== undefined;
  }

  /** Directories watched now (sources.watch), and how many could not be watched for a limit or an error since start. */
  get watchedDirectories(): { watched: number; fallbacks: number } {
    return { watched: this.watch.watchedCount, fallbacks: this.watch.fallbacks };
  }

  /**
   * The directories of the followed files (and of the patterns), by how they are followed now: watched, or
   * polled and why. With sources.watch off, all are polled (`off`).
   */
  get directoryModes(): Map<DirectoryMode, number> {
    if (this.watch.enabled) return this.watch.modes();
    const [dirs] = this.patternDirs();
    for (const f of this.ctx.followed.values()) if (f.end === undefined) dirs.add(resolve(dirname(f.path)));
    return new Map([['off', dirs.size]]);
  }

  /** Files followed, open or not. */
  get followedCount(): number {
    return this.ctx.followed.size;
  }

  /** Resolves once the first scan is done (existing files opened at their start position). */
  async start(): Promise<void> {
    if (this.started) throw new Error('FileFollower already started');
    this.started = true;
    await this.pollOnce();
    if (this.ctx.stopped) return;
    this.timer = setInterval(() => this.tick(), this.opts.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS);
  }

  /**
   * Stops polling and closes every file; pending partial lines are not emitted. A cycle under way stops
   * reading at its next chunk but finishes what it started (a rotation found is fully registered), so
   * the positions kept for the final checkpoint are consistent.
   */
  async stop(): Promise<void> {
    this.ctx.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    while (this.cycle) await this.cycle;
    this.watch.close();
    this.finalState ??= this.capture();
    const all = [...this.ctx.followed.values()];
    this.ctx.followed.clear();
    await Promise.all(all.map((f) => this.ctx.openFiles.park(f)));
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
    const files = [...this.ctx.followed.values()].map((f) => positionOf(f, this.ctx.visible.has(f.key)));
    return { patterns: [...this.opts.patterns], files, known: this.ctx.known.list() };
  }

  /** One scan and read cycle that stats every file; waits for a cycle already running rather than overlapping it. */
  async pollOnce(): Promise<void> {
    while (this.cycle) await this.cycle;
    if (this.ctx.stopped) return;
    await this.runCycle();
  }

  /**
   * One cycle as the poll timer runs it: idle files whose last stat still stands (stat-schedule.ts) are
   * not stat-ed. For a test that steps the schedule by hand, with its own clock.
   */
  async pollScheduled(): Promise<void> {
    while (this.cycle) await this.cycle;
    if (this.ctx.stopped) return;
    await this.runCycle(false, true);
  }

  private tick(): void {
    if (this.ctx.stopped) return;
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
  private runCycle(ticked = false, scheduled = ticked): Promise<void> {
    const cycle = this.cycleBody(scheduled).finally(() => {
      this.cycle = undefined;
      // A held tick after a cycle that read nothing waits for the next tick: a cycle slow only because it
      // checks many idle files would otherwise run back to back.
      const more = (this.tickHeld && this.ctx.readThisCycle > 0) || (ticked && this.ctx.budgetHit);
      this.tickHeld = false;
      if (more) {
        // After the awaits of snapshot() and stop() that wait for this cycle: they take their turn first.
        setImmediate(() => this.tick());
      }
    });
    this.cycle = cycle;
    return cycle;
  }

  /** `scheduled`: idle files are stat-ed on their back-off schedule, not every cycle. */
  private async cycleBody(scheduled: boolean): Promise<void> {
    const firstScan = !this.scanned;
    const startAtEnd = firstScan && (this.opts.startAt ?? 'end') === 'end';
    this.scanned = true;
    this.ctx.beginCycle();
    const now = Date.now();
    if (scheduled && (await this.rests(now))) {
      this.restedPolls++;
      this.lastScheduledMs = now;
      return;
    }
    this.rest = undefined;
    let rest: Rest | undefined;
    try {
      const resume = this.pendingResume;
      if (resume !== undefined) {
        this.ctx.capNewFiles = true;
        await this.resumeFrom(resume);
        this.pendingResume = undefined;
      }
      // Events so far are this poll's; directories replaced since the last poll lose their watch.
      const changes = this.watch.changes;
      if (this.watch.enabled) await this.watch.begin(now, ...this.watchedDirs());
      // A scheduled poll lists again only the globs whose directory may have changed; every poll keeps what it listed.
      const listings = this.watch.enabled ? { reuse: (p: string) => (scheduled ? this.watch.listing(p, now) : undefined), listed: (p: string) => this.watch.beforeListing(p, now) } : undefined;
      const candidates = await expand(this.opts.patterns, this.ctx.problem, (pattern) => this.ctx.follows((f) => f.source === pattern), this.ctx.fs, listings);
      // Idle files not due for a stat keep what their last stat found (the glob still lists every path).
      // Polls late on a loaded machine (a tick dropped while a long cycle ran): the next is expected as late.
      const nextPollIn = now - (this.lastScheduledMs ?? now);
      if (scheduled) this.lastScheduledMs = now;
      const lastSeen = scheduled ? (c: Candidate) => this.lastSeenIfDeferred(c, now, nextPollIn) : undefined;
      // `deferred`: files not stat-ed this poll; this poll neither reads them nor moves their checkedAtMs.
      const { visible, missing, reused: deferred } = await locate(candidates, this.ctx.problem, this.ctx.fs, lastSeen);
      this.ctx.visible = visible;
      for (const f of this.ctx.followed.values()) {
        f.floor = f.seenSize;
        f.readThisPoll = 0;
      }
      // Files whose path moved on are drained first, so their last lines precede the new file's.
      for (const f of [...this.ctx.followed.values()]) {
        if (this.ctx.stopped) return;
        if (!visible.has(f.key) && this.ctx.followed.get(f.key) === f) await this.recovery.drainDetached(f);
      }
      for (const f of [...this.ctx.followed.values()]) {
        if (this.ctx.stopped) return;
        const v = visible.get(f.key);
        if (v && this.ctx.followed.get(f.key) === f && !deferred.has(f.key)) await this.followLive(f, v, now);
      }
      for (const [key, v] of visible) {
        if (this.ctx.stopped) return;
        // A pattern the checkpoint followed: its files not in the checkpoint appeared since, read from their start.
        const resumed = this.ctx.resumedSources.has(v.source) && !this.untrusted.has(key);
        if (!this.ctx.followed.has(key)) await this.openNew(key, v, startAtEnd && !resumed, !firstScan || resumed, now);
      }
      // A configured path is missing; not a problem while its file is still drained after a rename.
      for (const c of missing) {
        if (this.ctx.stopped) return;
        if (!this.ctx.follows((f) => f.path === c.path)) this.ctx.problem(`file:${c.path}`, c.source, 'not_found', c.detail);
        await this.recovery.recoverWhileMissing(c.source, c.path);
      }
      if (missing.length === 0) rest = this.restAfter(candidates, now, changes);
    } catch (err) {
      // Every step catches its own errors; this only keeps a surprise from ending the poll loop.
      for (const pattern of this.opts.patterns) {
        this.ctx.problem(`pattern:${pattern}`, pattern, 'read_error', errorMessage(err));
      }
    }
    if (this.ctx.stopped) return;
    this.ctx.publishProblems();
    this.ctx.capNewFiles = false;
    if (!this.ctx.budgetHit) this.markCaughtUp();
    // A problem is looked at again every poll (a path missing, a file not readable yet).
    if (this.ctx.problemCount === 0 && !this.ctx.budgetHit) this.rest = rest;
  }

  /**
   * Whether the poll at `now` may rest: the last poll left a rest that still stands, no directory event
   * (nor a watch lost) came since that poll began, and the glob directories' mtimes are unchanged.
   */
  private async rests(now: number): Promise<boolean> {
    const r = this.rest;
    if (r === undefined || now < r.atMs || now >= r.untilMs || this.watch.changes !== r.changes || this.pendingResume !== undefined) return false;
    return this.watch.listedUnchanged(this.patternDirs()[1]);
  }

  /**
   * After a poll at `now` that found no path missing: a rest, when the next poll would stat no file and
   * list no glob unless an event came (the conditions of lastSeenIfDeferred and of the listings, for
   * every file with no event), until the first file, directory or listing is due for its rescan.
   * `changes`: the watch's change count when the poll began, so an event during the poll ends the rest.
   */
  private restAfter(candidates: Map<string, Candidate>, now: number, changes: number): Rest | undefined {
    // Every path a pattern names is one followed file's (no file draining, none waiting to be opened).
    if (!this.watch.enabled || candidates.size !== this.ctx.followed.size) return undefined;
    let until = this.watch.restUntil(now, this.opts.patterns);
    if (until === undefined) return undefined;
    const rescanMs = this.opts.rescanIntervalMs ?? DEFAULT_RESCAN_INTERVAL_MS;
    for (const c of candidates.values()) {
      const key = this.ctx.atPath.get(c.path)?.key;
      const f = key === undefined ? undefined : this.ctx.followed.get(key);
      if (f === undefined || f.path !== c.path || f.end !== undefined || f.capCheck || f.offset < f.seenSize || f.idleStats === 0) return undefined;
      if (f.watchPath === undefined || f.watchCheckedPath !== f.path) return undefined;
      const since = this.watch.watchedSince(f.watchPath);
      if (since === undefined || since > f.checkedAtMs) return undefined;
      until = Math.min(until, f.checkedAtMs + rescanMs);
    }
    return { atMs: now, untilMs: until, changes };
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
    for (const p of r.state.patterns) if (configured.has(p)) this.ctx.resumedSources.add(p);
    for (const k of r.state.known) this.ctx.known.remember(k.key, k.head, k.offset);
    // What the patterns reach now, to tell which checkpointed files are still followed (problems are the first poll's to report).
    const candidates = await expand(
      this.opts.patterns,
      () => undefined,
      () => true,
      this.ctx.fs,
    );
    this.ctx.visible = (await locate(candidates, () => undefined, this.ctx.fs)).visible;
    const resumeAs = (e: FilePosition): FilePosition | undefined => {
      if (this.untrusted.has(e.key)) return undefined;
      if (configured.has(e.source)) return e;
      const v = this.ctx.visible.get(e.key);
      if (v !== undefined) return { ...e, source: v.source, path: e.state === 'live' ? v.path : e.path };
      const c = candidates.get(e.path);
      return c === undefined ? undefined : { ...e, source: c.source };
    };
    const entries = filesToResume(r.state, resumeAs);
    const resuming = new Set(entries.map((e) => e.key));
    for (const e of r.state.files) {
      if (resuming.has(e.key) || this.untrusted.has(e.key)) continue;
      this.ctx.known.remember(e.key, e.head, e.offset);
      this.restoredKeys.add(e.key);
    }
    for (const e of entries) {
      if (this.ctx.followed.has(e.key)) continue;
      if (e.state !== 'orphan' && !this.ctx.atPath.has(e.path)) this.ctx.notePath(e.path, e.key, r.savedAtMs);
      const found = (await this.ctx.openFiles.makeRoom()) ? await findFile(e, this.ctx.scratch, this.ctx.index, this.ctx.fs) : 'unopenable';
      if (found === 'unopenable') {
        // At its path but not readable now (permissions, or no descriptor to spare): when it can be opened, it resumes from here.
        this.ctx.known.remember(e.key, e.head, e.offset);
        this.restoredKeys.add(e.key);
        continue;
      }
      if (found === undefined) {
        this.ctx.emit(() => this.ctx.events.resumed?.(e.source, e.path, 'gone', e.offset));
        continue;
      }
      const outcome: ResumeOutcome = found.path === e.path ? 'at_path' : 'moved';
      const f = await resumedFollowed(e, found, r.savedAtMs, this.ctx.newSplitter(e.source, e.path), this.ctx.fs);
      if (await alignResumedOffset(f, e, this.opts.maxLineBytes, this.ctx.buf, this.ctx.scratch)) {
        this.ctx.emit(() => this.ctx.events.offsetDistrusted?.(e.source, found.path, e.offset, f.offset));
      }
      this.ctx.register(f);
      this.ctx.emit(() => this.ctx.events.resumed?.(e.source, found.path, outcome, e.offset));
    }
  }

  /** A followed file still matched by a pattern (maybe under a new name, after a rename within the glob). */
  private async followLive(f: Followed, v: Visible, now: number): Promise<void> {
    f.path = v.path;
    f.end = undefined;
    f.idlePolls = 0;
    // Read only when the scan's stat says there may be something new (a closed file is only then opened again).
    const changed = this.mayHaveChanged(f, v);
    if (changed) await this.reader.read(f);
    if (this.watch.enabled && f.watchCheckedPath !== f.path) await this.checkWatchable(f);
    f.idleStats = changed ? 0 : f.idleStats + 1;
    // The stat schedule counts from here too: a poll that defers the stat leaves it (stat-schedule.ts).
    f.checkedAtMs = now;
    this.ctx.notePath(f.path, f.key, now);
  }

  /**
   * What the last stat found of the followed file at `c`'s path, when the file is idle and its next stat
   * is not due at `now`; undefined when it is to be stat-ed. A file not fully read, resumed, or ended is
   * always stat-ed.
   */
  private lastSeenIfDeferred(c: Candidate, now: number, nextPollIn: number): { key: string; seen: Visible } | undefined {
    const key = this.ctx.atPath.get(c.path)?.key;
    const f = key === undefined ? undefined : this.ctx.followed.get(key);
    if (f === undefined || f.path !== c.path || f.end !== undefined || f.capCheck || f.offset < f.seenSize) return undefined;
    // Its directory's watch said nothing of it since its last stat (which found it idle): nothing to stat
    // for. An event that may be about it is this poll's only (the next poll's are new ones): stat-ed now.
    const watched = f.watchPath !== undefined && f.watchCheckedPath === f.path ? this.watch.state(f.watchPath, f.checkedAtMs, now) : 'unknown';
    if (watched === 'changed' || (watched === 'unchanged' && f.idleStats === 0)) return undefined;
    if (watched === 'unknown' && !statDeferred(now, f.checkedAtMs, f.idleStats, this.opts.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS, nextPollIn)) return undefined;
    return { key: f.key, seen: { path: f.path, source: c.source, size: f.seenSize, mtimeMs: f.mtimeMs } };
  }

  /**
   * The directories a poll looks into: those of the patterns (where a new file would appear) and of the
   * live followed files, absolute; and of those, the directories of globs whose listing may be kept.
   */
  private watchedDirs(): [Set<string>, Set<string>] {
    const [dirs, listed] = this.patternDirs();
    for (const f of this.ctx.followed.values()) if (f.end === undefined && f.watchPath !== undefined) dirs.add(dirname(f.watchPath));
    return [dirs, listed];
  }

  /** The directories the patterns name (a literal path's, a glob's static part), and of those the globs' (listed). */
  private patternDirs(): [Set<string>, Set<string>] {
    const dirs = new Set<string>();
    const listed = new Set<string>();
    for (const p of this.opts.patterns) {
      const dynamic = fg.isDynamicPattern(p);
      const d = dynamic ? DirectoryWatch.listedDir(p) : resolve(dirname(p));
      if (d !== undefined) dirs.add(d);
      if (dynamic && d !== undefined) listed.add(d);
    }
    return [dirs, listed];
  }

  /** Whether the file's path is a regular file and not a symlink: only then do its directory's events tell of its writes. */
  private async checkWatchable(f: Followed): Promise<void> {
    const path = f.path;
    const st = await this.ctx.fs.lstat(path).catch(() => undefined);
    if (f.path !== path) return;
    f.watchCheckedPath = path;
    f.watchPath = st?.isFile() === true && identity(st) === f.key ? resolve(path) : undefined;
  }

  /** Whether a file may hold bytes not read, or new content: grown, shrunk, written since its last probe, or never fully probed. */
  private mayHaveChanged(f: Followed, v: Visible): boolean {
    return f.capCheck || v.size !== f.seenSize || v.mtimeMs !== f.mtimeMs || f.offset < v.size || f.head.length < Math.min(v.size, FINGERPRINT_BYTES);
  }

  private async openNew(seen: string, v: Visible, fromEnd: boolean, checkCopies: boolean, now: number): Promise<void> {
    let fh: FollowerHandle | undefined;
    try {
      fh = await this.ctx.openCapped(v.path);
    } catch (err) {
      if (fromEnd) this.rememberEndAtFirstSight(seen, v.size);
      this.ctx.problem(`file:${v.path}`, v.source, fsErrorReason(err), `${v.path}: ${errorMessage(err)}`);
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
      head = keep(await readHead(fh, this.ctx.scratch));
      const knownOffset = key === seen ? this.ctx.known.offsetOf(key, head, size) : undefined;
      if (knownOffset !== undefined) {
        // Read before and let go of, or a checkpointed file no pattern reached at the restore: it goes on from there.
        offset = knownOffset;
        this.ctx.known.forget(key);
        fromEnd = false;
        checkCopies = false;
      } else if (fromEnd) {
        offset = await startOfLastLine(fh, st.size, this.opts.maxLineBytes, this.ctx.buf);
      } else if (key === seen) {
        const atStart = this.endAtFirstSight.get(key);
        if (atStart !== undefined) {
          // Seen at start (start-at=end) but not readable then: the lines it held then are skipped, as they would have been.
          this.endAtFirstSight.delete(key);
          offset = size >= atStart ? await startOfLastLine(fh, atStart, this.opts.maxLineBytes, this.ctx.buf) : 0;
          fromEnd = true;
        }
      }
    } catch (err) {
      await fh.close().catch(() => undefined);
      this.ctx.problem(`file:${v.path}`, v.source, 'read_error', `${v.path}: ${errorMessage(err)}`);
      return;
    }
    // Stopped meanwhile, or the path was replaced between stat and open by a file already followed.
    if (this.ctx.stopped || this.ctx.followed.has(key)) {
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
      await this.recovery.followMoved(seen, v, now);
      if (this.ctx.stopped || this.ctx.followed.has(key)) {
        await fh.close().catch(() => undefined);
        return;
      }
    }
    if (!fromEnd && offset === 0) offset = startOffset({ key, head, size }, checkCopies, this.ctx.known, this.ctx.followed.values());
    const f = newFollowed({
      key,
      path: v.path,
      source: v.source,
      fh,
      family: await this.ctx.familyAt(v.path),
      offset,
      head,
      size,
      checkedAtMs: now,
      capCheck: this.ctx.capNewFiles && (this.ctx.resumedSources.has(v.source) || this.restoredKeys.has(key)),
      splitter: this.ctx.newSplitter(v.source, v.path),
    });
    if (this.ctx.stopped || this.ctx.followed.has(key)) {
      await fh.close().catch(() => undefined);
      return;
    }
    this.ctx.register(f);
    this.ctx.openFiles.pin(f);
    try {
      const before = this.ctx.atPath.get(v.path);
      this.ctx.notePath(v.path, key, now);
      this.ctx.emit(() => this.ctx.events.opened?.(v.source, v.path));
      if (before !== undefined && before.key !== key && !fromEnd) {
        // The path named another file: generations rotated away since it was last seen there come first.
        if (before.deleted) this.ctx.emit(() => this.ctx.events.rotated?.(v.source, v.path, 'recreate'));
        await this.recovery.recoverBetween(before, f, v.source, v.path);
      }
      await this.reader.read(f);
    } finally {
      this.ctx.openFiles.unpin(f);
    }
  }

  private rememberEndAtFirstSight(key: string, size: number): void {
    this.endAtFirstSight.set(key, size);
    if (this.endAtFirstSight.size > MAX_REMEMBERED_PATHS) this.endAtFirstSight.delete(this.endAtFirstSight.keys().next().value as string);
  }
}
