// Writes a checkpoint so that a crash at any instant leaves either the previous checkpoint or the new
// one on disk, never a torn file: write a temporary file, fsync it, rename it over the old one, fsync
// the directory (so the rename itself survives a power cut).
import { closeSync, fsyncSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

function tmpPrefix(path: string): string {
  return `${basename(path)}.tmp-`;
}

export function writeCheckpointFile(path: string, state: unknown): void {
  const tmp = join(dirname(path), `${tmpPrefix(path)}${process.pid}`);
  const fd = openSync(tmp, 'w', 0o600);
  try {
    // writeFileSync on a descriptor loops until every byte is written (writeSync may write part).
    writeFileSync(fd, JSON.stringify(state));
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    unlinkSync(tmp);
    throw err;
  }
  closeSync(fd);
  try {
    renameSync(tmp, path);
  } catch (err) {
    unlinkSync(tmp);
    throw err;
  }
  const dir = openSync(dirname(path), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}

/** The parsed checkpoint, or undefined when there is none yet. A file that is not JSON throws (a SyntaxError). */
export function readCheckpointFile(path: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  return JSON.parse(text) as unknown;
}

/**
 * Removes temporary files a run killed in the middle of a write left beside the checkpoint (they were
 * never renamed, so they were never the checkpoint). Call at start-up, before this run writes.
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
    if (!name.startsWith(prefix)) continue;
    try {
      unlinkSync(join(dirname(path), name));
    } catch {
      // Gone already, or not ours to remove: harmless either way.
    }
  }
}
