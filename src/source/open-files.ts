// How many followed files are held open at once. Past `sources.maxOpenFiles` the least recently active
// file is closed (it stays followed, and is reopened by identity when it grows), so a glob over thousands
// of files never takes the descriptors the HTTP server needs to answer a scrape.
import { readFileSync } from 'node:fs';
import type { Followed } from './followed-file.js';

/**
 * Descriptors left below the process's limit for everything else: HTTP connections (a scrape, the landing
 * page, ingest), checkpoint writes, the transient opens of rotation recovery, Node's own.
 */
export const RESERVED_DESCRIPTORS = 128;
/** The lowest cap: a rotation being recovered holds the file, its copy and a generation at once. */
export const MIN_OPEN_FILES = 8;

/** The process's soft limit on open descriptors (RLIMIT_NOFILE, which Node raises to the hard limit at start); undefined where /proc is not there. */
function descriptorLimit(limits = '/proc/self/limits'): number | undefined {
  let text: string;
  try {
    text = readFileSync(limits, 'utf8');
  } catch {
    return undefined;
  }
  const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(text);
  if (m === null || m[1] === 'unlimited') return undefined;
  return Number(m[1]);
}

/** The cap in force: the configured one, lowered so that RESERVED_DESCRIPTORS stay free below the process limit. */
export function openFilesCap(configured: number, limit: number | undefined = descriptorLimit()): number {
  if (limit === undefined) return configured;
  return Math.max(MIN_OPEN_FILES, Math.min(configured, limit - RESERVED_DESCRIPTORS));
}

/**
 * The open followed files, least recently active first. Files in use by the step under way are pinned:
 * never closed under it. `makeRoom` closes the least recently active unpinned file that `parkable`
 * allows (one at its path, so it can be reopened there), when the cap is reached.
 */
export class OpenFiles {
  private readonly open = new Map<Followed, true>();
  private readonly pinned = new Map<Followed, number>();

  constructor(
    private capValue: number,
    private readonly parkable: (f: Followed) => boolean,
  ) {}

  get cap(): number {
    return this.capValue;
  }

  get count(): number {
    return this.open.size;
  }

  /** After EMFILE/ENFILE: the process holds fewer descriptors than the cap assumed; hold fewer. */
  lower(to: number): void {
    this.capValue = Math.max(MIN_OPEN_FILES, Math.min(this.capValue, to));
  }

  /** `f` holds a descriptor now (or was active again): it moves to the back of the queue. */
  touch(f: Followed): void {
    if (f.fh === undefined) return;
    this.open.delete(f);
    this.open.set(f, true);
  }

  pin(f: Followed): void {
    this.pinned.set(f, (this.pinned.get(f) ?? 0) + 1);
  }

  unpin(f: Followed): void {
    const n = (this.pinned.get(f) ?? 0) - 1;
    if (n > 0) this.pinned.set(f, n);
    else this.pinned.delete(f);
  }

  /** Closes files until one more can be opened under the cap; false when every open file is in use. */
  async makeRoom(): Promise<boolean> {
    while (this.open.size >= this.capValue) {
      const victim = this.leastRecent();
      if (victim === undefined) return false;
      await this.park(victim);
    }
    return true;
  }

  /** Closes one file's descriptor; it stays followed. */
  async park(f: Followed): Promise<void> {
    const fh = f.fh;
    f.fh = undefined;
    this.open.delete(f);
    await fh?.close().catch(() => undefined);
  }

  private leastRecent(): Followed | undefined {
    for (const f of this.open.keys()) if (!this.pinned.has(f) && this.parkable(f)) return f;
    return undefined;
  }
}
