// Which regular files the follower's patterns name this poll: globs expanded, paths stat'ed, problems reported.
import type { Stats } from 'node:fs';
import fg from 'fast-glob';
import type { SourceErrorReason } from './line-sink.js';
import { errorMessage, fsErrorReason } from './fs-error-reason.js';
import { identity } from './file-identity.js';
import { fileKind } from './file-kind.js';
import { nodeFs, type FollowerFs } from './follower-fs.js';

/** What to give instead of a path that is not a regular file: a pipe's lines go to stdin, a directory wants a glob. */
const NOT_A_FILE_FIX = (st: Stats): string =>
  st.isFIFO() || st.isSocket() || st.isCharacterDevice()
    ? ': serve follows files by position; send a stream to its stdin instead (cmd | zero-plane-exporter serve -)'
    : st.isDirectory()
      ? ': give a file, or a glob such as DIR/*.log'
      : '';

const GLOB_OPTIONS = {
  onlyFiles: true,
  dot: true,
  followSymbolicLinks: true,
  suppressErrors: true,
  unique: true,
} as const;

/** Notes a problem about `key` (a pattern or a path); the first one noted per key and poll counts. */
export type ReportProblem = (key: string, source: string, reason: SourceErrorReason, detail: string) => void;

/** A path to look at this poll, and the pattern that produced it. */
export interface Candidate {
  path: string;
  source: string;
  /** Named directly in the config (not a glob match), so its absence is a problem. */
  literal: boolean;
}

/** A regular file seen this poll, with its size and mtime then (a closed file is reopened only when they change). */
export interface Visible {
  path: string;
  source: string;
  size: number;
  mtimeMs: number;
}

/**
 * A glob's listing kept between polls (directory-watch.ts): `reuse` gives it while its directory has not
 * changed; `listed`, called before a listing, gives what to hand the paths found to, if they may be kept.
 */
export interface Listings {
  reuse(pattern: string): string[] | undefined;
  listed(pattern: string): ((paths: string[]) => void) | undefined;
}

/**
 * Expands the patterns into paths; a path is claimed by the first pattern that yields it. A glob that
 * matches nothing is a problem unless a file of it is still followed.
 */
export async function expand(patterns: string[], problem: ReportProblem, stillFollowed: (pattern: string) => boolean, fs: FollowerFs = nodeFs, listings?: Listings): Promise<Map<string, Candidate>> {
  const candidates = new Map<string, Candidate>();
  for (const pattern of patterns) {
    if (!fg.isDynamicPattern(pattern)) {
      if (!candidates.has(pattern)) candidates.set(pattern, { path: pattern, source: pattern, literal: true });
      continue;
    }
    let paths = listings?.reuse(pattern);
    try {
      if (paths === undefined) {
        const keep = listings?.listed(pattern);
        paths = (await fs.glob(pattern, GLOB_OPTIONS)).sort();
        keep?.(paths);
      }
    } catch (err) {
      problem(`pattern:${pattern}`, pattern, fsErrorReason(err), `${pattern}: ${errorMessage(err)}`);
      continue;
    }
    // Mid-rotation the only match may be renamed away while still followed: not a problem yet.
    if (paths.length === 0 && !stillFollowed(pattern)) {
      problem(`pattern:${pattern}`, pattern, 'not_found', `no file matches ${pattern}`);
    }
    for (const path of paths) {
      if (!candidates.has(path)) candidates.set(path, { path, source: pattern, literal: false });
    }
  }
  return candidates;
}

/** A candidate not stat-ed this poll: the identity and Visible its last stat found stand for it. */
export type LastSeen = (c: Candidate) => { key: string; seen: Visible } | undefined;

/**
 * Stats the candidates; returns the regular files among them by identity, and the configured paths
 * that are missing (a problem unless their file is still being drained after a rename). A candidate
 * `lastSeen` answers for is not stat-ed: what its last stat found is taken as it is.
 */
export async function locate(
  candidates: Map<string, Candidate>,
  problem: ReportProblem,
  fs: FollowerFs = nodeFs,
  lastSeen?: LastSeen,
): Promise<{ visible: Map<string, Visible>; missing: Array<Candidate & { detail: string }>; reused: Set<string> }> {
  const visible = new Map<string, Visible>();
  const missing: Array<Candidate & { detail: string }> = [];
  /** The files whose entry is what `lastSeen` gave, not a stat of this poll. */
  const reused = new Set<string>();
  for (const c of candidates.values()) {
    const last = lastSeen?.(c);
    if (last !== undefined) {
      if (!visible.has(last.key)) {
        visible.set(last.key, last.seen);
        reused.add(last.key);
      }
      continue;
    }
    let st: Stats;
    try {
      st = await fs.stat(c.path);
    } catch (err) {
      const reason = fsErrorReason(err);
      // A glob match gone since listing is not a problem.
      if (reason === 'not_found' && !c.literal) continue;
      if (reason === 'not_found') missing.push({ ...c, detail: `${c.path}: ${errorMessage(err)}` });
      else problem(`file:${c.path}`, c.source, reason, `${c.path}: ${errorMessage(err)}`);
      continue;
    }
    if (!st.isFile()) {
      problem(`file:${c.path}`, c.source, 'read_error', `${c.path}: not a regular file (${fileKind(st)})${NOT_A_FILE_FIX(st)}`);
      continue;
    }
    const key = identity(st);
    // Two paths to one file (hard or symbolic link): read it once.
    if (!visible.has(key)) visible.set(key, { path: c.path, source: c.source, size: st.size, mtimeMs: st.mtimeMs });
  }
  return { visible, missing, reused };
}
