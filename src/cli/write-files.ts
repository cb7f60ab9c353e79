// `generate` writes what the pack, dashboard, mixin and deploy renderers return: relative path → content.
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { checkNoLinkBetween, writeFileSafely } from '../fs/safe-write.js';
import { UsageError } from './flags.js';

/**
 * Makes the output directory a flag names (and its parents); a file in the way is bad usage, named with
 * the flag, instead of mkdir's bare EEXIST or ENOTDIR.
 */
export function makeOutDir(dir: string, flag: string): void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why = e.code === 'EEXIST' || e.code === 'ENOTDIR' ? 'it is a file, or lies under one, not a directory' : e.message;
    throw new UsageError(`--${flag} ${dir}: cannot make the output directory: ${why}`);
  }
}

/**
 * Writes every file under `outDir` (made with makeOutDir first), creating subfolders; returns the paths
 * written. Each through a temporary file renamed over it (src/fs/safe-write.ts), never through a link,
 * nor into a subfolder that is one.
 */
export function writeFiles(files: ReadonlyMap<string, string>, outDir: string): string[] {
  const written: string[] = [];
  for (const [file, content] of files) {
    const path = join(outDir, file);
    // Before mkdir too: mkdir -p would make directories through a link already there.
    checkNoLinkBetween(outDir, path);
    mkdirSync(dirname(path), { recursive: true });
    checkNoLinkBetween(outDir, path);
    writeFileSafely(path, content);
    written.push(path);
  }
  return written;
}
