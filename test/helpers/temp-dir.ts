// Temp directories a test creates, removed when its file's tests end (pass or fail).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made = new Set<string>();

/** A fresh directory under the run's TMPDIR; test/setup/remove-temp-dirs.ts removes it after the file. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.add(dir);
  return dir;
}

/** Removes every directory tempDir() made in this worker (the per-file setup calls it). */
export function removeTempDirs(): void {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
  made.clear();
}
