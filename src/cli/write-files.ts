// `generate` writes what the pack, dashboard, mixin and deploy renderers return: relative path → content.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Writes every file under `outDir`, creating folders; returns the paths written. */
export function writeFiles(files: ReadonlyMap<string, string>, outDir: string): string[] {
  const written: string[] = [];
  for (const [file, content] of files) {
    const path = join(outDir, file);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
    written.push(path);
  }
  return written;
}
