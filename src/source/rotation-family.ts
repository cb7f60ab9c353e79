// Where a followed file's rotated copies and generations live: the files in its directory named after it.
// Looked at only when a rotation is seen, to recover what rotation moved out of the followed path.
import { basename, dirname, join } from 'node:path';
import { byCodeUnits } from '../code-unit-order.js';
import { identity, keep, readHead, sameStart } from './file-identity.js';
import { nodeFs, type FollowerFs, type FollowerHandle } from './follower-fs.js';

/** A followed file's real directory and name (a symlink's target, not the link). */
export interface Family {
  dir: string;
  base: string;
}

export async function familyOf(path: string, fs: FollowerFs = nodeFs): Promise<Family | undefined> {
  try {
    const real = await fs.realpath(path);
    return { dir: dirname(real), base: basename(real) };
  } catch {
    return undefined;
  }
}

/** The family of a path with nothing at it now: its name in its directory's real path (or the directory as given). */
export async function familyBeside(path: string, fs: FollowerFs = nodeFs): Promise<Family> {
  const dir = await fs.realpath(dirname(path)).catch(() => dirname(path));
  return { dir, base: basename(path) };
}

const SEPARATORS = '.-_';

function extends_(name: string, prefix: string): boolean {
  return name.length > prefix.length && name.startsWith(prefix) && SEPARATORS.includes(name.charAt(prefix.length));
}

/**
 * A name a rotated copy or generation of `base` may have: `base` with a suffix (`app.log.1`,
 * `app.log-20240101`, `app.log.1.gz`), or the stem with a suffix (`dateext` with `extension .log` gives
 * `app-20240101.log`, numbered with `extension` gives `app.1.log`). A wide net: a copy is recognised by
 * its content, a generation by its place in a rotation scheme next to a file already known (rotation-evidence.ts).
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
  /** Other names the walk found it under (a shift moved it while the directory was walked). */
  alsoAt?: string[];
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
export async function probeSiblings(family: Family, exceptKey: string, scratch: Buffer, knownHead: (key: string) => Buffer | undefined = () => undefined, fs: FollowerFs = nodeFs): Promise<Sibling[]> {
  let out: Sibling[] = [];
  for (let attempt = 0; attempt < PROBE_ATTEMPTS; attempt++) {
    const walk = await walkFamily(family, exceptKey, scratch, knownHead, fs);
    out = walk.siblings;
    if (sameListing(walk.seen, await listFamily(family, fs))) break;
  }
  return out;
}

/** Copy names of the family → identity, as a stat sees them now. */
async function listFamily(family: Family, fs: FollowerFs): Promise<Map<string, string>> {
  const seen = new Map<string, string>();
  const names = await fs.readdir(family.dir).catch(() => [] as string[]);
  for (const name of names) {
    if (!isCopyName(name, family.base)) continue;
    const st = await fs.stat(join(family.dir, name)).catch(() => undefined);
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
  fs: FollowerFs,
): Promise<{ siblings: Sibling[]; seen: Map<string, string> }> {
  const seen = new Map<string, string>();
  const out: Sibling[] = [];
  const seenAgain = (key: string, name: string): boolean => {
    const o = out.find((x) => x.key === key);
    if (o !== undefined && o.name !== name) (o.alsoAt ??= []).push(name);
    return o !== undefined;
  };
  const visit = async (name: string): Promise<boolean> => {
    const path = join(family.dir, name);
    // stat first: opening a FIFO for reading would block until it has a writer.
    const st = await fs.stat(path).catch(() => undefined);
    if (st === undefined || !st.isFile()) return st !== undefined;
    const key = identity(st);
    seen.set(name, key);
    // The same file under two names (renamed while the directory is walked): seen once, at its first (lowest) name.
    if (key === exceptKey || seenAgain(key, name)) return true;
    const head = knownHead(key);
    if (head !== undefined) {
      out.push({ path, name, key, size: st.size, mtimeMs: st.mtimeMs, head });
      return true;
    }
    const fh = await fs.open(path).catch(() => undefined);
    if (fh === undefined) return true;
    try {
      const now = await fh.stat();
      // Another file shifted into this name since the stat: that one is taken, as the name holds it now
      // (skipping it would lose it: it may have moved past the names already walked).
      const nowKey = identity(now);
      if (nowKey !== key) {
        seen.set(name, nowKey);
        if (nowKey === exceptKey || seenAgain(nowKey, name)) return true;
      }
      out.push({ path, name, key: nowKey, size: now.size, mtimeMs: now.mtimeMs, head: keep(await readHead(fh, scratch)) });
    } catch {
      // Gone or unreadable meanwhile: not a sibling this time.
    } finally {
      await fh.close().catch(() => undefined);
    }
    return true;
  };
  const names = (await fs.readdir(family.dir).catch(() => [] as string[])).filter((name) => isCopyName(name, family.base));
  // Numbered names are walked by number, NAME.1 up to the highest listed, each looked at by its name (a
  // listing taken while a rename runs may miss the name being renamed to), then on past the highest until
  // one is missing: a shift during the walk moves the oldest past the names listed. So no file escapes
  // the walk by moving up (see walkOrder).
  const tops = new Map<string, { name: string; k: number }>();
  const others: string[] = [];
  for (const name of names) {
    const k = numberedIndex(name, family.base);
    if (k === undefined) {
      others.push(name);
      continue;
    }
    const scheme = numberedName(name, family.base, 0);
    const top = tops.get(scheme);
    if (top === undefined || k > top.k) tops.set(scheme, { name, k });
  }
  for (const top of tops.values()) {
    let highest = top.k;
    for (let k = 1; k <= MAX_NUMBERED_INDEX; k++) {
      if ((await visit(numberedName(top.name, family.base, k))) || k < highest) continue;
      // Missing at or past the highest name listed: the end of the scheme, or a hole a shift running now
      // leaves for a moment (NAME.k moved up, NAME.(k-1) not yet in its place), with the oldest generations
      // above it. Stopping there lost them, the file read before among them: none of the generations
      // between it and the new file was read, nor counted. A fresh listing tells which.
      highest = highestNumbered(await fs.readdir(family.dir).catch(() => [] as string[]), top.name, family.base);
      if (highest <= k) break;
    }
  }
  for (const name of others.sort()) await visit(name);
  return { siblings: out, seen };
}

/**
 * The order a family is walked in: numbered names by rising number (`NAME.2` before `NAME.10`), then the
 * others by name. A numbered shift only moves files to higher numbers, so a walk by rising number sees
 * every file once at least, however many shifts run while it walks (a file cannot move past the walk
 * without being seen), and sees newer generations at lower numbers than older ones. By plain name order
 * (`NAME.1`, `NAME.10`, …, `NAME.2`, …, `NAME.9`), a shift during the walk can carry `NAME.9` to `NAME.10`
 * after `NAME.10` was walked: a generation never read, and never counted lost.
 */
export function walkOrder(names: string[], base: string): string[] {
  const keyed = names.map((name) => ({ name, k: numberedIndex(name, base) }));
  keyed.sort((a, b) => {
    if (a.k !== undefined && b.k !== undefined && a.k !== b.k) return a.k - b.k;
    if (a.k !== undefined && b.k === undefined) return -1;
    if (a.k === undefined && b.k !== undefined) return 1;
    return byCodeUnits(a.name, b.name);
  });
  return keyed.map((x) => x.name);
}

/**
 * Opens a probed sibling to read it: at its path if it is still there, else wherever a rotation shifting
 * the family moved it since (found by identity and fingerprint). Undefined when it is gone.
 */
export async function openSibling(s: Sibling, family: Family | undefined, scratch: Buffer, fs: FollowerFs = nodeFs): Promise<{ fh: FollowerHandle; path: string } | undefined> {
  const at = await openIfSame(s.path, s.key, s.head, scratch, fs);
  if (at !== undefined) return { fh: at, path: s.path };
  const dir = family?.dir ?? dirname(s.path);
  const base = family?.base ?? basename(s.path);
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  // By rising number and on past the names listed (see walkOrder): a shift running meanwhile cannot carry it past the search.
  let top: { name: string; k: number } | undefined;
  for (const name of walkOrder(names, base)) {
    const k = numberedIndex(name, base);
    if (k !== undefined && (top === undefined || k > top.k)) top = { name, k };
    const path = join(dir, name);
    if (path === s.path) continue;
    const fh = await openIfSame(path, s.key, s.head, scratch, fs);
    if (fh !== undefined) return { fh, path };
  }
  let highest = top?.k ?? 0;
  for (let k = highest + 1; top !== undefined && k <= MAX_NUMBERED_INDEX; k++) {
    const path = join(dir, numberedName(top.name, base, k));
    if ((await fs.stat(path).catch(() => undefined)) === undefined) {
      // The end of the scheme, or a hole a shift leaves for a moment below the oldest names: a fresh listing tells.
      highest = highestNumbered(await fs.readdir(dir).catch(() => [] as string[]), top.name, base);
      if (highest <= k) break;
      continue;
    }
    const fh = await openIfSame(path, s.key, s.head, scratch, fs);
    if (fh !== undefined) return { fh, path };
  }
  return undefined;
}

/** The file at `path` opened, if it is a regular file with this identity and starts with `head`. */
async function openIfSame(path: string, key: string, head: Buffer, scratch: Buffer, fs: FollowerFs): Promise<FollowerHandle | undefined> {
  const st = await fs.stat(path).catch(() => undefined);
  if (st === undefined || !st.isFile() || identity(st) !== key) return undefined;
  const fh = await fs.open(path).catch(() => undefined);
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
const MAX_NUMBERED_INDEX = 9999;

/** The highest number among `names` in the numbered scheme of `anchor` (0 when none). */
function highestNumbered(names: string[], anchor: string, base: string): number {
  const scheme = numberedName(anchor, base, 0);
  let highest = 0;
  for (const name of names) {
    const k = numberedIndex(name, base);
    if (k !== undefined && k > highest && numberedName(name, base, 0) === scheme) highest = k;
  }
  return highest;
}

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
