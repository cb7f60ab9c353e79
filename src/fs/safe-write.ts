// Every file the exporter writes (export's blocks, generate's pack, the checkpoint) is written here: to a
// temporary file of its own beside the target, created with O_CREAT | O_EXCL | O_NOFOLLOW (a name planted
// there, a link to a file elsewhere or a dangling one, is never opened, let alone written through), then
// renamed over the target. rename() replaces a directory entry: a link at the target is replaced itself,
// its target is left alone. A write that fails (a full disk) removes the temporary file and says which
// file could not be written; the target is then as it was before, never a truncated file.
import { randomBytes } from 'node:crypto';
import { closeSync, constants, fsyncSync, lstatSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { open, rename, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';

/** A file could not be written: named, with the reason (ENOSPC, EISDIR, …). Nothing partial is left. */
export class WriteFileError extends Error {
  constructor(
    readonly path: string,
    readonly code: string | undefined,
    detail: string,
  ) {
    super(`cannot write ${path}: ${detail}`);
    this.name = 'WriteFileError';
  }
}

export interface SafeWriteOptions {
  /** The new file's mode (before the umask); 0o644 unless given. */
  mode?: number;
  /** fsync the file before the rename and the directory after it, so both survive a power cut. */
  durable?: boolean;
  /** Told just before the rename, with the temporary file complete: may throw to keep the target as it is. */
  beforeReplace?: () => void;
  /**
   * The temporary file's path, beside `path`, instead of a random hidden name: for a writer that removes
   * its own leftovers after a crash by that name (the checkpoint). Still created O_EXCL | O_NOFOLLOW.
   */
  tempPath?: string;
}

/** How many names are tried when one is taken (a leftover, or planted): each is random. */
const NAME_TRIES = 8;
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** A name for a temporary file beside `path`, hidden, never one already there. */
function tempName(path: string): string {
  return join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`);
}

function failure(path: string, err: unknown): WriteFileError {
  if (err instanceof WriteFileError) return err;
  const e = err as NodeJS.ErrnoException;
  return new WriteFileError(path, e.code, e.code === undefined ? e.message : `${e.code} (${e.message.replace(/^[A-Z]+: /, '')})`);
}

function openTempSync(path: string, mode: number, given: string | undefined): { fd: number; tmp: string } {
  for (let i = 0; ; i++) {
    const tmp = given ?? tempName(path);
    try {
      return { fd: openSync(tmp, CREATE_FLAGS, mode), tmp };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || given !== undefined || i + 1 >= NAME_TRIES) throw failure(path, err);
    }
  }
}

function syncDirectory(path: string): void {
  const dir = openSync(dirname(path), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}

/** Writes `content` to `path` through a temporary file renamed over it. Throws WriteFileError naming `path`. */
export function writeFileSafely(path: string, content: string | Uint8Array, opts: SafeWriteOptions = {}): void {
  const { fd, tmp } = openTempSync(path, opts.mode ?? 0o644, opts.tempPath);
  const bytes = typeof content === 'string' ? Buffer.from(content) : content;
  try {
    try {
      // writeSync may write part: loop until every byte is written.
      for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at);
      if (opts.durable === true) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    opts.beforeReplace?.();
    renameSync(tmp, path);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // Already renamed or gone: nothing partial left.
    }
    throw failure(path, err);
  }
  if (opts.durable === true) syncDirectory(path);
}

/** A file written a piece at a time (export's blocks), replacing its target only once `commit` is called. */
export class SafeFileWriter {
  private constructor(
    readonly path: string,
    private readonly tmp: string,
    private fh: FileHandle | undefined,
  ) {}

  static async open(path: string, mode = 0o644): Promise<SafeFileWriter> {
    for (let i = 0; ; i++) {
      const tmp = tempName(path);
      try {
        return new SafeFileWriter(path, tmp, await open(tmp, CREATE_FLAGS, mode));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || i + 1 >= NAME_TRIES) throw failure(path, err);
      }
    }
  }

  async write(text: string): Promise<void> {
    if (this.fh === undefined) throw new WriteFileError(this.path, undefined, 'already closed');
    try {
      // FileHandle.write of a string writes all of it (it loops over partial writes).
      await this.fh.write(text);
    } catch (err) {
      await this.abort();
      throw failure(this.path, err);
    }
  }

  /** Closes the temporary file and renames it over the target. */
  async commit(): Promise<void> {
    const fh = this.fh;
    this.fh = undefined;
    try {
      await fh?.close();
      await rename(this.tmp, this.path);
    } catch (err) {
      await unlink(this.tmp).catch(() => {});
      throw failure(this.path, err);
    }
  }

  /** Closes and removes the temporary file: the target stays as it was. Safe to call more than once. */
  async abort(): Promise<void> {
    const fh = this.fh;
    this.fh = undefined;
    await fh?.close().catch(() => {});
    await unlink(this.tmp).catch(() => {});
  }
}

/**
 * Fails when a directory between `root` (the directory a flag named, the user's choice) and `path`'s own
 * directory is a symbolic link or not a directory: a link planted as a subdirectory would otherwise take
 * the files written under it somewhere else. `path` must lie under `root`.
 */
export function checkNoLinkBetween(root: string, path: string): void {
  const rel = relative(root, dirname(path));
  if (rel === '' || rel === '.') return;
  let at = root;
  for (const part of rel.split(sep)) {
    at = join(at, part);
    const st = lstatSync(at, { throwIfNoEntry: false });
    if (st === undefined) return; // made after this check, by mkdir: a directory
    if (st.isSymbolicLink() || !st.isDirectory())
      throw new WriteFileError(path, st.isSymbolicLink() ? 'ELOOP' : 'ENOTDIR', `${at} is ${st.isSymbolicLink() ? 'a symbolic link' : 'not a directory'}, not a directory of the output`);
  }
}
