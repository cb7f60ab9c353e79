// Where a followed file's rotated copies and generations live: the files in its directory named after it.
// Looked at only when a rotation is seen, to recover what rotation moved out of the followed path.
import { open, readdir, realpath, stat, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { identity, keep, readHead, sameStart } from './file-identity.js';

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

/**
 * A name a rotated copy or generation of `base` may have: `base` with a suffix (`app.log.1`,
 * `app.log-20240101`, `app.log.1.gz`), or the stem with a suffix (`dateext` with `extension .log` gives
 * `app-20240101.log`, numbered with `extension` gives `app.1.log`). A wide net: a copy is recognised by
 * its content, a generation by its place in a rotation scheme next to a file already known (rotation-recovery.ts).
 */
export function isCopyName(name: string, base: string): boolean {
  if (name === base) return false;
  if (extends_(name, base)) return true;
  const dot = base.indexOf('.');
  return dot > 0 && extends_(name, base.slice(0, dot));
}

/** A regular file of the family, with its identity and fingerprint; not held open (see openSibling). */
export interface Sibling {
  path: string;
  name: string;
  key: string;
  size: number;
  mtimeMs: number;
  head: Buffer;
}

/** Probes of a family that a rotation running meanwhile changed are done again, this many times at most. */
const PROBE_ATTEMPTS = 4;

/**
 * The regular files that may be copies or generations of the family's file (other than `exceptKey`),
 * with their fingerprints. Each is opened only to read its first bytes and closed at once, so a family
 * of any size costs one descriptor at a time; a file whose fingerprint `knownHead` already has (one
 * followed) is not opened at all. A rotation shifting names while the directory is walked (`NAME.1` →
 * `NAME.2`, a new `NAME.1`) would show one file twice and another not at all: the listing is checked
 * again after the walk, and the walk done again until the names still name the same files.
 */
export async function probeSiblings(
  family: Family,
  exceptKey: string,
  scratch: Buffer,
  knownHead: (key: string) => Buffer | undefined = () => undefined,
): Promise<Sibling[]> {
  let out: Sibling[] = [];
  for (let attempt = 0; attempt < PROBE_ATTEMPTS; attempt++) {
    const walk = await walkFamily(family, exceptKey, scratch, knownHead);
    out = walk.siblings;
    if (sameListing(walk.seen, await listFamily(family))) break;
  }
  return out;
}

/** Copy names of the family → identity, as a stat sees them now. */
async function listFamily(family: Family): Promise<Map<string, string>> {
  const seen = new Map<string, string>();
  const names = await readdir(family.dir).catch(() => [] as string[]);
  for (const name of names) {
    if (!isCopyName(name, family.base)) continue;
    const st = await stat(join(family.dir, name)).catch(() => undefined);
    if (st?.isFile()) seen.set(name, identity(st));
  }
  return seen;
}

function sameListing(a: Map<string, string>, b: Map<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [name, key] of a) if (b.get(name) !== key) return false;
  return true;
}

async function walkFamily(
  family: Family,
  exceptKey: string,
  scratch: Buffer,
  knownHead: (key: string) => Buffer | undefined,
): Promise<{ siblings: Sibling[]; seen: Map<string, string> }> {
  const seen = new Map<string, string>();
  const out: Sibling[] = [];
  const names = await readdir(family.dir).catch(() => [] as string[]);
  for (const name of names.sort()) {
    if (!isCopyName(name, family.base)) continue;
    const path = join(family.dir, name);
    // stat first: opening a FIFO for reading would block until it has a writer.
    const st = await stat(path).catch(() => undefined);
    if (st === undefined || !st.isFile()) continue;
    const key = identity(st);
    seen.set(name, key);
    // The same file under two names (renamed while the directory is walked): seen once only.
    if (key === exceptKey || out.some((o) => o.key === key)) continue;
    const head = knownHead(key);
    if (head !== undefined) {
      out.push({ path, name, key, size: st.size, mtimeMs: st.mtimeMs, head });
      continue;
    }
    const fh = await open(path, 'r').catch(() => undefined);
    if (fh === undefined) continue;
    try {
      const now = await fh.stat();
      if (identity(now) !== key) continue;
      out.push({ path, name, key, size: now.size, mtimeMs: now.mtimeMs, head: keep(await readHead(fh, scratch)) });
    } catch {
      // Gone or unreadable meanwhile: not a sibling this time.
    } finally {
      await fh.close().catch(() => undefined);
    }
  }
  return { siblings: out, seen };
}

/**
 * Opens a probed sibling to read it: at its path if it is still there, else wherever a rotation shifting
 * the family moved it since (found by identity and fingerprint). Undefined when it is gone.
 */
export async function openSibling(s: Sibling, family: Family | undefined, scratch: Buffer): Promise<{ fh: FileHandle; path: string } | undefined> {
  const at = await openIfSame(s.path, s.key, s.head, scratch);
  if (at !== undefined) return { fh: at, path: s.path };
  const dir = family?.dir ?? dirname(s.path);
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names.sort()) {
    const path = join(dir, name);
    if (path === s.path) continue;
    const fh = await openIfSame(path, s.key, s.head, scratch);
    if (fh !== undefined) return { fh, path };
  }
  return undefined;
}

/** The file at `path` opened, if it is a regular file with this identity and starts with `head`. */
async function openIfSame(path: string, key: string, head: Buffer, scratch: Buffer): Promise<FileHandle | undefined> {
  const st = await stat(path).catch(() => undefined);
  if (st === undefined || !st.isFile() || identity(st) !== key) return undefined;
  const fh = await open(path, 'r').catch(() => undefined);
  if (fh === undefined) return undefined;
  try {
    if (identity(await fh.stat()) === key && sameStart(await readHead(fh, scratch), head)) return fh;
  } catch {
    // Unreadable meanwhile: not it.
  }
  await fh.close().catch(() => undefined);
  return undefined;
}

/**
 * What a rotation adds to the family's name, if `name` is one it gives: `app.log.3` → `.3` (after the
 * base), `app-20240101.log` → `-20240101` and `app.1.log` → `.1` (after the stem, before the base's
 * extension; marked so the two kinds never compare equal). Rotations add numbers, dates and times:
 * separators and digits only. `app.log-canary`, `app.log.count` and `app.log.1.gz` are not generations
 * one could read (whatever they hold), and digits in the base itself (`app2.log`) are never taken for
 * a generation number.
 */
function rotationSuffix(name: string, base: string): string | undefined {
  let suffix: string | undefined;
  if (extends_(name, base)) suffix = `+${name.slice(base.length)}`;
  else {
    const dot = base.indexOf('.');
    const ext = dot > 0 ? base.slice(dot) : '';
    if (dot > 0 && extends_(name, base.slice(0, dot)) && name.endsWith(ext) && name.length > dot + ext.length) {
      suffix = `-${name.slice(dot, name.length - ext.length)}`;
    }
  }
  return suffix !== undefined && ROTATION_SUFFIX.test(suffix.slice(1)) ? suffix : undefined;
}

const ROTATION_SUFFIX = /^[.\-_]\d+(?:[.\-_T:]?\d+)*$/;

/** Numbered schemes (`NAME.1`, `NAME.2`, …) count up from 1 with the age: one run of at most 4 digits. */
const MAX_NUMBERED_DIGITS = 4;

/** A numbered scheme's index of a generation name (`app.log.3` → 3), or undefined for another scheme. */
export function numberedIndex(name: string, base: string): number | undefined {
  const suffix = rotationSuffix(name, base);
  const runs = suffix?.match(/\d+/g) ?? [];
  if (runs.length !== 1) return undefined;
  const run = runs[0] as string;
  if (run.length > MAX_NUMBERED_DIGITS || run.startsWith('0')) return undefined;
  return Number(run);
}

/**
 * Whether `name` is a generation in the same rotation scheme as `anchor`: both names a rotation gives,
 * the same but for their numbers (`app.log.2` and `app.log.3`; `app.log-20240102` and
 * `app.log-20240101`). `app.log-canary` or `app.log.count` next to `app.log.1` are not.
 */
export function sameScheme(name: string, anchor: string, base: string): boolean {
  const a = rotationSuffix(anchor, base);
  const n = rotationSuffix(name, base);
  if (a === undefined || n === undefined || name === anchor) return false;
  if (numberedIndex(anchor, base) !== undefined) return numberedIndex(name, base) !== undefined && n.replace(/\d+/, '#') === a.replace(/\d+/, '#');
  return n.replace(/\d/g, '#') === a.replace(/\d/g, '#');
}

/** The name generation `k` has in the numbered scheme of `anchor` (`app.log.3`, 1 → `app.log.1`). */
export function numberedName(anchor: string, base: string, k: number): string {
  if (extends_(anchor, base)) return base + anchor.slice(base.length).replace(/\d+/, String(k));
  const dot = base.indexOf('.');
  return base.slice(0, dot) + anchor.slice(dot).replace(/\d+/, String(k));
}
