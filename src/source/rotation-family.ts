// Where a followed file's rotated copies and generations live: the files in its directory named after it.
// Looked at only when a rotation is seen, to recover what rotation moved out of the followed path.
import { open, readdir, realpath, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { identity, keep, readHead } from './file-identity.js';

/** A followed file's real directory and name (a symlink's target, not the link). */
export interface Family {
  dir: string;
  base: string;
}

export async function familyOf(path: string): Promise<Family | undefined> {
  try {
    const real = await realpath(path);
    return { dir: dirname(real), base: basename(real) };
  } catch {
    return undefined;
  }
}

const SEPARATORS = '.-_';

function extends_(name: string, prefix: string): boolean {
  return name.length > prefix.length && name.startsWith(prefix) && SEPARATORS.includes(name.charAt(prefix.length));
}

/** A name logrotate gives an older generation of `base`: `app.log.1`, `app.log-20240101`, `app.log.1.gz`. */
export function isGenerationName(name: string, base: string): boolean {
  return extends_(name, base);
}

/**
 * A name a rotated copy of `base` may have: a generation name, or the stem with a suffix
 * (`dateext` with `extension .log` gives `app-20240101.log`). Copies are recognised by content, so a
 * wide net here costs a fingerprint read, never a wrong line.
 */
export function isCopyName(name: string, base: string): boolean {
  if (name === base) return false;
  if (extends_(name, base)) return true;
  const dot = base.indexOf('.');
  return dot > 0 && extends_(name, base.slice(0, dot));
}

/** A regular file of the family, opened, with its fingerprint. */
export interface Sibling {
  path: string;
  name: string;
  key: string;
  size: number;
  mtimeMs: number;
  head: Buffer;
  fh: FileHandle;
}

/**
 * Opens the regular files that may be copies or generations of the family's file (other than
 * `exceptKey`) and reads their fingerprints. The caller closes every handle it does not keep.
 */
export async function probeSiblings(family: Family, exceptKey: string, scratch: Buffer): Promise<Sibling[]> {
  let names: string[];
  try {
    names = await readdir(family.dir);
  } catch {
    return [];
  }
  const out: Sibling[] = [];
  for (const name of names.sort()) {
    if (!isCopyName(name, family.base)) continue;
    const path = join(family.dir, name);
    // stat first: opening a FIFO for reading would block until it has a writer.
    const st = await stat(path).catch(() => undefined);
    if (st === undefined || !st.isFile() || identity(st) === exceptKey) continue;
    let fh: FileHandle;
    try {
      fh = await open(path, 'r');
    } catch {
      continue;
    }
    try {
      const now = await fh.stat();
      const key = identity(now);
      // Renamed while the directory is walked (a rotation shifting NAME.k → NAME.k+1): seen once only.
      if (key === exceptKey || out.some((o) => o.key === key)) {
        await fh.close();
        continue;
      }
      const head = keep(await readHead(fh, scratch));
      out.push({ path, name, key, size: now.size, mtimeMs: now.mtimeMs, head, fh });
    } catch {
      await fh.close().catch(() => undefined);
    }
  }
  return out;
}
