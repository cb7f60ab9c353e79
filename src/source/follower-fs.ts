// The file-system calls the file follower makes, behind one narrow interface. Production uses Node's own
// functions as they are (one property lookup per call, per file and poll, never per line); a test passes a
// wrapper that slows, stalls or rotates files between these calls, so an interleaving that loses lines on a
// starved machine can be replayed exactly (test/helpers/starved-fs.ts).
import { watch, type Stats, type StatsFs } from 'node:fs';
import { lstat, open, readdir, realpath, stat, statfs } from 'node:fs/promises';
import fg from 'fast-glob';

/** What the follower does with an open file: positional reads, fstat, close (a FileHandle is one). */
export interface FollowerHandle {
  read(buffer: Buffer, offset: number, length: number, position: number): Promise<{ bytesRead: number }>;
  stat(): Promise<Stats>;
  close(): Promise<void>;
}

export interface FollowerFs {
  stat(path: string): Promise<Stats>;
  lstat(path: string): Promise<Stats>;
  /** Opens for reading. */
  open(path: string): Promise<FollowerHandle>;
  readdir(path: string): Promise<string[]>;
  realpath(path: string): Promise<string>;
  /** The paths a glob pattern matches now (fast-glob with `options`). */
  glob(pattern: string, options: fg.Options): Promise<string[]>;
  /** The filesystem of a path (its type tells whether watch events can be trusted); absent: never watched. */
  statfs?(path: string): Promise<Pick<StatsFs, 'type'>>;
  /**
   * Watches a directory's entries (fs.watch: inotify on Linux), without keeping the process alive; absent:
   * never watched. Throws when no watch can be set up (ENOSPC: the user's inotify watches are used up).
   */
  watch?(dir: string, onEvent: (type: string, name: string | null) => void, onError: (err: unknown) => void): { close(): void };
}

export const nodeFs: FollowerFs = {
  stat: (path) => stat(path),
  lstat: (path) => lstat(path),
  open: (path) => open(path, 'r'),
  readdir: (path) => readdir(path),
  realpath: (path) => realpath(path),
  glob: (pattern, options) => fg(pattern, options),
  statfs: (path) => statfs(path),
  watch: (dir, onEvent, onError) => {
    const w = watch(dir, { persistent: false }, (type, name) => onEvent(type, name));
    w.on('error', onError);
    return w;
  },
};
