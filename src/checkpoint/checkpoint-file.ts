// Writes a checkpoint so that a crash at any instant leaves either the previous checkpoint or the new
// one on disk, never a torn file: write a temporary file, fsync it, rename it over the old one, fsync
// the directory (so the rename itself survives a power cut). Only ever over a checkpoint of ours: the
// path naming anything else (a user's file, a device, a FIFO, a directory, a symlink) is refused, and
// nothing there is moved, truncated or written.
import { closeSync, constants, linkSync, lstatSync, openSync, readdirSync, readFileSync, readSync, unlinkSync, type Stats } from 'node:fs';
import { writeFileSafely } from '../fs/safe-write.js';
import { fileKind } from '../source/file-kind.js';
import { basename, dirname, join } from 'node:path';

/**
 * How every checkpoint this exporter writes begins (JSON.stringify keeps takeCheckpoint's key order): a
 * file that does not is not ours to read, move or replace.
 */
const SIGNATURE = /^\{"version":\d+,"savedAt":"/;
/** Enough of a file's start to tell it by SIGNATURE. */
const SIGNATURE_BYTES = 64;
/** The literal start every checkpoint shares, for a temporary file cut shorter than SIGNATURE. */
const SIGNATURE_PREFIX = '{"version":';

/** The checkpoint path names something that is not a checkpoint of this exporter: a config error. */
export class NotACheckpointError extends Error {
  constructor(
    readonly path: string,
    what: string,
  ) {
    super(`${path} ${what}; nothing there was changed. Give checkpoint.file a path of its own (or remove what is there).`);
    this.name = 'NotACheckpointError';
  }
}

/** What is at a checkpoint path: nothing yet, an empty file (nothing to lose), or a checkpoint of ours. */
type CheckpointPathState = 'absent' | 'empty' | 'ours';

/**
 * What the checkpoint path holds, from lstat and its first bytes only (never an open of anything but a
 * regular file: a FIFO would block the open until it had a writer). Throws NotACheckpointError for
 * anything that is not absent, empty or ours; other I/O errors are thrown as they are.
 */
function inspectCheckpointPath(path: string): CheckpointPathState {
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
    throw err;
  }
  const kind = fileKind(st);
  if (kind !== 'a regular file') throw new NotACheckpointError(path, `is ${kind}, not a checkpoint file`);
  if (st.size === 0) return 'empty';
  const head = readStart(path, SIGNATURE_BYTES);
  if (!SIGNATURE.test(head)) throw new NotACheckpointError(path, `exists and is not a checkpoint of zero-plane-exporter (it begins ${JSON.stringify(head.slice(0, 24))})`);
  return 'ours';
}

/** The first `bytes` of a regular file (O_NOFOLLOW, O_NONBLOCK: never a link, never a wait), as text. */
function readStart(path: string, bytes: number): string {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const buf = Buffer.alloc(bytes);
    const n = readSync(fd, buf, 0, bytes, 0);
    return buf.toString('utf8', 0, n);
  } finally {
    closeSync(fd);
  }
}

function tmpPrefix(path: string): string {
  return `${basename(path)}.tmp-`;
}

export function writeCheckpointFile(path: string, state: unknown): void {
  // Through the shared safe write: a temporary file beside it (O_EXCL | O_NOFOLLOW, never written through a
  // name already there), fsynced, renamed over it, the directory fsynced. Something else put at the path
  // since start (a user's file, a FIFO) is not replaced.
  writeFileSafely(path, JSON.stringify(state), {
    mode: 0o600,
    durable: true,
    tempPath: join(dirname(path), `${tmpPrefix(path)}${process.pid}`),
    beforeReplace: () => void inspectCheckpointPath(path),
  });
}

/**
 * The parsed checkpoint, or undefined when there is none yet (no file, or an empty one). Throws
 * NotACheckpointError when the path holds something that is not ours, a SyntaxError for a checkpoint of
 * ours that is not whole JSON.
 */
export function readCheckpointFile(path: string): unknown {
  if (inspectCheckpointPath(path) !== 'ours') return undefined;
  return JSON.parse(readFileSync(path, 'utf8')) as unknown;
}

/**
 * Moves a checkpoint of ours that cannot be used out of the way, to PATH.unusable (or .unusable.1, …):
 * never over a file already there. Returns where it went, or undefined when it was left in place.
 */
export function moveAside(path: string): string | undefined {
  for (let i = 0; i < 100; i++) {
    const aside = i === 0 ? `${path}.unusable` : `${path}.unusable.${i}`;
    try {
      // link fails with EEXIST instead of replacing: the move never overwrites.
      linkSync(path, aside);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') continue;
      return undefined;
    }
    try {
      unlinkSync(path);
    } catch {
      // Both names now: the next write replaces the checkpoint's, the copy stays aside.
    }
    return aside;
  }
  return undefined;
}

/**
 * Removes temporary files a run killed in the middle of a write left beside the checkpoint (they were
 * never renamed, so they were never the checkpoint). Only NAME.tmp-PID regular files whose content is
 * the start of a checkpoint are ours; anything else of that name is left alone. Call at start-up,
 * before this run writes.
 */
export function removeStaleTemporaries(path: string): void {
  const prefix = tmpPrefix(path);
  let names: string[];
  try {
    names = readdirSync(dirname(path));
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix) || !/^\d+$/.test(name.slice(prefix.length))) continue;
    const tmp = join(dirname(path), name);
    try {
      if (!lstatSync(tmp).isFile()) continue;
      // Cut anywhere by the crash: its start is a start of every checkpoint, or that start is all it has.
      const head = readStart(tmp, SIGNATURE_PREFIX.length);
      if (SIGNATURE_PREFIX.startsWith(head)) unlinkSync(tmp);
    } catch {
      // Gone already, or not readable: harmless either way.
    }
  }
}
