// The file-system calls the file follower makes, behind one narrow interface. Production uses Node's own
// functions as they are (one property lookup per call, per file and poll, never per line); a test passes a
// wrapper that slows, stalls or rotates files between these calls, so an interleaving that loses lines on a
// starved machine can be replayed exactly (test/helpers/starved-fs.ts).
import type { Stats } from 'node:fs';
import { lstat, open, readdir, realpath, stat } from 'node:fs/promises';
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
}

export const nodeFs: FollowerFs = {
  stat: (path) => stat(path),
  lstat: (path) => lstat(path),
  open: (path) => open(path, 'r'),
  readdir: (path) => readdir(path),
  realpath: (path) => realpath(path),
  glob: (pattern, options) => fg(pattern, options),
};
