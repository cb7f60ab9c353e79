// What the follower's directories tell between two polls, so an idle poll need not stat every idle file nor
// list every glob again. One fs.watch (inotify on Linux) per directory, not per file: a directory watch
// reports appends, creates, renames and deletes of the entries in it, by name. A file is stat-ed when its
// directory reported its name (or an event without a name), and at least every `rescanMs` anyway (the slow
// safety poll: a queue overflow, a hard link written through another directory, a filesystem whose events
// do not come). A glob whose directory part is static is listed again only when the directory's mtime or
// identity changed, a watch event came, or `rescanMs` passed. Where watching is not possible (sources.watch
// off, a network or FUSE filesystem, no inotify watch to spare) the follower polls as before.
import { basename, dirname, resolve } from 'node:path';
import { readFileSync } from 'node:fs';
import fg from 'fast-glob';
import { errorMessage } from './fs-error-reason.js';
import { identity } from './file-identity.js';
import type { FollowerFs } from './follower-fs.js';

/** sources.watch: `auto` watches directories where it is reliable and polls elsewhere; `off` only polls. */
export type WatchMode = 'auto' | 'off';

/** Why a directory is polled rather than watched (reported once per directory and reason). */
export type WatchFallback = 'unreliable_fs' | 'watch_limit' | 'watch_error';

/**
 * How a directory of followed files is followed now: watched, or polled and why (a fallback, `absent`: not
 * there to watch yet, or `off`: sources.watch is off). Every value is a label of the directory gauges.
 */
export type DirectoryMode = 'watched' | WatchFallback | 'absent' | 'off';
export const DIRECTORY_POLL_REASONS: readonly Exclude<DirectoryMode, 'watched'>[] = ['off', 'unreliable_fs', 'watch_limit', 'watch_error', 'absent'];

/**
 * Filesystems whose changes may be made where this kernel does not see them (another NFS client, a FUSE
 * daemon, a host share): inotify would stay silent, so they are polled. statfs(2) f_type magic numbers.
 */
const UNRELIABLE_FS = new Set([
  0x6969, // NFS
  0x517b, // SMB
  0xff534d42, // CIFS
  0xfe534d42, // SMB2
  0x65735546, // FUSE (sshfs, s3fs, gcsfuse, glusterfs …)
  0x01021997, // 9p (WSL, virtfs)
  0x00c36400, // Ceph
  0x5346414f, // AFS
  0x6b414653, // kAFS
  0x73757245, // Coda
  0x564c, // NCP
  0x7461636f, // OCFS2
  0x01161970, // GFS2
  0x47504653, // GPFS
  0x786f4256, // vboxsf
]);

/** A directory's mtime this close to the listing's start may hide a later change in the same tick: listed again. */
const RACY_MTIME_MS = 1000;

/**
 * Watches held at most: a share of the user's inotify watches (shared with every process of the user), so
 * the exporter never takes them all. Past it, directories are polled (counted, logged).
 */
export function watchCap(maxUserWatches = readMaxUserWatches()): number {
  return maxUserWatches === undefined ? 1024 : Math.max(0, Math.min(8192, Math.floor(maxUserWatches / 4)));
}

function readMaxUserWatches(): number | undefined {
  try {
    const n = Number(readFileSync('/proc/sys/fs/inotify/max_user_watches', 'utf8').trim());
    return Number.isFinite(n) && n > 0 ? n : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What a watch reports: `rename`, an entry came, went or moved; `change`, an entry was written to (or its
 * attributes changed); `name` is the entry's, or null when the event did not say (anything may have changed).
 */
export type WatchListener = (type: string, name: string | null) => void;

export interface DirectoryWatcher {
  close(): void;
}

interface Dir {
  readonly dir: string;
  /** statfs said events can be trusted here (undefined: not asked yet). */
  local: boolean | undefined;
  watcher: DirectoryWatcher | undefined;
  /** The poll time the watch was set up at: only stats after it may be trusted to be followed by its events. */
  watchedSinceMs: number;
  /** Identity and mtime of the directory at its last stat (undefined: not there, or not a directory). */
  key: string | undefined;
  mtimeMs: number;
  /** When it was last stat-ed; and whether an event may have been about the directory itself (moved or deleted). */
  statAtMs: number;
  suspect: boolean;
  /** Names with events since this poll began, and whether an event named nothing (everything may have changed). */
  pending: Set<string>;
  pendingAll: boolean;
  /** The same, frozen at this poll's start: what the stats of this poll may skip. */
  changed: Set<string>;
  changedAll: boolean;
  /** Events that may have added or removed entries, ever: a listing is stale once it grew. */
  entryEvents: number;
  /** When a watch last failed here (it is tried again after rescanMs). */
  failedAtMs: number | undefined;
  reported: WatchFallback | undefined;
}

/** A glob's last listing, and the state of its directory when it was taken. */
interface Listing {
  paths: string[];
  dir: string;
  key: string;
  mtimeMs: number;
  entryEvents: number;
  watched: boolean;
  atMs: number;
}

export interface WatchEvents {
  /** A directory is polled, not watched, and why; once per directory and reason. */
  fallback(dir: string, reason: WatchFallback, detail: string): void;
}

export class DirectoryWatch {
  private readonly dirs = new Map<string, Dir>();
  private readonly listings = new Map<string, Listing>();
  private readonly cap: number;
  /** Directories polled because a watch could not be set up (limit or error), since start. */
  fallbacks = 0;
  /** Events, watches lost and watches failed, since start: a poll may rest only while this stays as it was (file-follower.ts). */
  changes = 0;

  constructor(
    private readonly mode: WatchMode,
    private readonly rescanMs: number,
    private readonly fs: FollowerFs,
    private readonly events: WatchEvents,
    cap = watchCap(),
  ) {
    this.cap = fs.watch === undefined || fs.statfs === undefined ? 0 : cap;
  }

  get enabled(): boolean {
    return this.mode === 'auto';
  }

  /** Directories watched now. */
  get watchedCount(): number {
    let n = 0;
    for (const d of this.dirs.values()) if (d.watcher !== undefined) n++;
    return n;
  }

  /** The directories of this poll's files, by how each is followed now. */
  modes(): Map<DirectoryMode, number> {
    const out = new Map<DirectoryMode, number>();
    for (const d of this.dirs.values()) {
      const mode: DirectoryMode = d.watcher !== undefined ? 'watched' : d.key === undefined ? 'absent' : (d.reported ?? 'watch_error');
      out.set(mode, (out.get(mode) ?? 0) + 1);
    }
    return out;
  }

  /**
   * A poll begins at `nowMs` and will look into `needed` (absolute directories): the events so far are
   * frozen for it (later ones are the next poll's), and watches are set up where missing. A directory is
   * stat-ed (replaced or gone, it loses its watch) when it is new, an event may have been about itself, the
   * rescan is due, or it is in `listed` (a glob's directory, whose mtime tells whether to list it again):
   * a directory of followed files only is not stat-ed every poll. Directories no longer needed are let go.
   */
  async begin(nowMs: number, needed: Set<string>, listed: Set<string>): Promise<void> {
    if (!this.enabled) return;
    for (const [dir, d] of this.dirs) {
      if (!needed.has(dir)) {
        d.watcher?.close();
        this.dirs.delete(dir);
        continue;
      }
      d.changed = d.pending;
      d.changedAll = d.pendingAll;
      d.pending = new Set();
      d.pendingAll = false;
    }
    for (const dir of needed) {
      let d = this.dirs.get(dir);
      if (d === undefined) {
        d = newDir(dir);
        this.dirs.set(dir, d);
      }
      const due = d.watcher === undefined || d.suspect || listed.has(dir) || nowMs - d.statAtMs >= this.rescanMs;
      if (!due) continue;
      d.suspect = false;
      d.statAtMs = nowMs;
      const st = await this.fs.stat(dir).catch(() => undefined);
      const key = st?.isDirectory() ? identity(st) : undefined;
      if (key !== d.key && d.watcher !== undefined) {
        // Replaced or gone: an inotify watch follows the old directory (or died with it).
        this.unwatch(d);
      }
      d.key = key;
      d.mtimeMs = st?.mtimeMs ?? 0;
      if (key !== undefined && d.watcher === undefined) await this.watch(d, nowMs);
    }
  }

  private unwatch(d: Dir): void {
    this.changes++;
    d.watcher?.close();
    d.watcher = undefined;
    d.changedAll = true;
    d.entryEvents++;
  }

  private async watch(d: Dir, nowMs: number): Promise<void> {
    if (d.failedAtMs !== undefined && nowMs - d.failedAtMs < this.rescanMs) return;
    if (d.local === undefined) {
      const sf = await this.fs.statfs?.(d.dir).catch(() => undefined);
      d.local = sf !== undefined && !UNRELIABLE_FS.has(Number(sf.type));
      if (!d.local) this.report(d, 'unreliable_fs', `${d.dir}: ${sf === undefined ? 'statfs failed' : `filesystem type 0x${Number(sf.type).toString(16)} may change without events`}`);
    }
    if (!d.local) return;
    if (this.watchedCount >= this.cap) {
      this.fail(d, nowMs, 'watch_limit', `${d.dir}: ${this.cap} directories watched already (a quarter of fs.inotify.max_user_watches)`);
      return;
    }
    try {
      const self = basename(d.dir);
      const onEvent: WatchListener = (type, name) => {
        this.changes++;
        if (name === null) d.pendingAll = true;
        else d.pending.add(name);
        // The watched directory moved or deleted is reported under its own name: stat it at the next poll.
        if (name === null || name === self) d.suspect = true;
        // An append ('change') leaves the listing as it is: a busy file does not make its glob be listed every poll.
        if (type !== 'change' || name === null) d.entryEvents++;
      };
      const w = this.fs.watch?.(d.dir, onEvent, (err) => {
        // The watch broke (the directory went, or inotify failed): polled until it is set up again.
        if (d.watcher === w) this.unwatch(d);
        this.fail(d, Date.now(), 'watch_error', `${d.dir}: ${errorMessage(err)}`);
      });
      if (w === undefined) return;
      d.watcher = w;
      d.watchedSinceMs = nowMs;
      d.failedAtMs = undefined;
      d.reported = undefined;
    } catch (err) {
      const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
      // ENOSPC: fs.inotify.max_user_watches reached; EMFILE: max_user_instances.
      const reason: WatchFallback = code === 'ENOSPC' || code === 'EMFILE' ? 'watch_limit' : 'watch_error';
      this.fail(d, nowMs, reason, `${d.dir}: ${errorMessage(err)}`);
    }
  }

  private fail(d: Dir, nowMs: number, reason: WatchFallback, detail: string): void {
    this.changes++;
    d.failedAtMs = nowMs;
    if (d.reported === reason) return;
    this.fallbacks++;
    this.report(d, reason, detail);
  }

  private report(d: Dir, reason: WatchFallback, detail: string): void {
    d.reported = reason;
    try {
      this.events.fallback(d.dir, reason, detail);
    } catch {
      // A failing listener must not break the poll.
    }
  }

  /**
   * What the watch knows of the file at absolute path `abs` (not a symlink: its writes show in its own
   * directory), last stat-ed by the poll at `statMs`, at the poll at `nowMs`. `unchanged`: its directory was
   * watched since before that stat and no event named it (nor came without a name); `changed`: an event may
   * be about it, or the safety poll is due, so it is to be stat-ed now (the event is this poll's only); and
   * `unknown`: not watched since then, the poll's own schedule decides.
   */
  state(abs: string, statMs: number, nowMs: number): 'unchanged' | 'changed' | 'unknown' {
    if (!this.enabled) return 'unknown';
    const d = this.dirs.get(dirname(abs));
    if (d?.watcher === undefined || d.watchedSinceMs > statMs) return 'unknown';
    if (nowMs - statMs >= this.rescanMs || d.changedAll || d.changed.has(basename(abs))) return 'changed';
    return 'unchanged';
  }

  /** When the directory of absolute path `abs` has been watched since (a poll's time), if it is watched now. */
  watchedSince(abs: string): number | undefined {
    const d = this.dirs.get(dirname(abs));
    return d?.watcher === undefined ? undefined : d.watchedSinceMs;
  }

  /**
   * After the poll at `nowMs`, until when a poll with no event since may rest, as far as the directories
   * go: every one watched and not suspect, until the first is due for its rescan; every glob of `patterns`
   * keeping its listing, until the first is due to be listed again. Undefined: the next poll is needed.
   */
  restUntil(nowMs: number, patterns: readonly string[]): number | undefined {
    if (!this.enabled) return undefined;
    let until = Number.POSITIVE_INFINITY;
    for (const d of this.dirs.values()) {
      if (d.watcher === undefined || d.suspect) return undefined;
      until = Math.min(until, d.statAtMs + this.rescanMs);
    }
    for (const p of patterns) {
      if (!fg.isDynamicPattern(p)) continue;
      const l = this.listings.get(p);
      if (l === undefined || this.listing(p, nowMs) === undefined) return undefined;
      until = Math.min(until, l.atMs + this.rescanMs);
    }
    return until;
  }

  /**
   * Whether the glob directories `listed` still have the identity and mtime the last poll found (one stat
   * each, as every poll makes): an entry that came without an event (a lost one) is then still listed at
   * the next poll, not at the rescan.
   */
  async listedUnchanged(listed: Iterable<string>): Promise<boolean> {
    for (const dir of listed) {
      const d = this.dirs.get(dir);
      if (d === undefined) return false;
      const st = await this.fs.stat(dir).catch(() => undefined);
      const key = st?.isDirectory() === true ? identity(st) : undefined;
      if (key === undefined || key !== d.key || st?.mtimeMs !== d.mtimeMs) return false;
    }
    return true;
  }

  /**
   * The static directory (absolute) of a glob whose only dynamic part is its last segment (`/var/log/*.log`),
   * whose listing can be kept while the directory does not change; undefined for other patterns.
   */
  static listedDir(pattern: string): string | undefined {
    const dir = dirname(pattern);
    if (fg.isDynamicPattern(dir) || dir.includes('\\')) return undefined;
    return resolve(dir);
  }

  /** The glob's last listing, when nothing since can have added or removed an entry; undefined: list it again. */
  listing(pattern: string, nowMs: number): string[] | undefined {
    if (!this.enabled) return undefined;
    const l = this.listings.get(pattern);
    if (l === undefined || nowMs - l.atMs >= this.rescanMs) return undefined;
    const d = this.dirs.get(l.dir);
    if (d?.local !== true || d.key !== l.key || d.mtimeMs !== l.mtimeMs || d.entryEvents !== l.entryEvents) return undefined;
    // Watched when listed and still (events are what make a change in the mtime's tick seen), or an mtime old enough.
    if (!(l.watched && d.watcher !== undefined) && l.mtimeMs > l.atMs - RACY_MTIME_MS) return undefined;
    return l.paths;
  }

  /**
   * Before listing `pattern` at `nowMs`: a function to call with what the listing found, which keeps it
   * if its directory's state (from this poll's start) still stands.
   */
  beforeListing(pattern: string, nowMs: number): ((paths: string[]) => void) | undefined {
    if (!this.enabled) return undefined;
    const dir = DirectoryWatch.listedDir(pattern);
    const d = dir === undefined ? undefined : this.dirs.get(dir);
    if (dir === undefined || d?.key === undefined || d.local !== true) {
      this.listings.delete(pattern);
      return undefined;
    }
    const state = { dir, key: d.key, mtimeMs: d.mtimeMs, entryEvents: d.entryEvents, watched: d.watcher !== undefined };
    return (paths) => this.listings.set(pattern, { ...state, paths, atMs: nowMs });
  }

  /** Closes every watch. */
  close(): void {
    for (const d of this.dirs.values()) d.watcher?.close();
    this.dirs.clear();
    this.listings.clear();
  }
}

function newDir(dir: string): Dir {
  return {
    dir,
    local: undefined,
    watcher: undefined,
    watchedSinceMs: 0,
    key: undefined,
    mtimeMs: 0,
    statAtMs: 0,
    suspect: false,
    pending: new Set(),
    pendingAll: false,
    changed: new Set(),
    changedAll: true,
    entryEvents: 0,
    failedAtMs: undefined,
    reported: undefined,
  };
}
