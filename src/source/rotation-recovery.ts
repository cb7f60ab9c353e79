// Finding where a rotated file went and reading what it still holds. A followed file no longer at its
// path (renamed, deleted, replaced behind a symlink) is drained to its end before it is let go of; a file
// truncated in place (copytruncate) has its unread bytes read from the copy beside it; generations that
// were at the path only between two polls (several rotations per poll) are found among its siblings by
// the evidence of rotation-evidence.ts and read first, oldest first.
import { errorMessage, fsErrorReason } from './fs-error-reason.js';
import { identity, keep, looksCompressed, readHead, sameStart } from './file-identity.js';
import { accept, newFollowed, type Followed, type Probe } from './followed-file.js';
import { MAX_REMEMBERED_PATHS, type DrainResult, type FollowerContext, type PathState } from './follower-context.js';
import type { TruncationHandler } from './file-reader.js';
import { findFile } from './follower-resume.js';
import type { LineSplitter } from './line-splitter.js';
import type { RotationKind } from './line-sink.js';
import type { Visible } from './pattern-scan.js';
import { contentBytes, gapSource, generationsToRead, gunzipStart, newCompressed, isCopyOf, startOffset, type GenerationScan } from './rotation-evidence.js';
import { openSibling, probeSiblings, type Family, type Sibling } from './rotation-family.js';

/**
 * How long a deleted file with nothing at its path yet is held open once draining it finds nothing new.
 * Its writer may still append (it has not reopened: nothing recreated the path), and on a starved machine
 * it may do so many polls later; once the path names a new file, the old one is let go of at the next
 * drain that finds nothing. Holding it only delays freeing its space.
 */
export const DEFAULT_DELETED_HOLD_MS = 30_000;

export class RotationRecovery implements TruncationHandler {
  /** Per configured path found missing, its directory's mtime when its generations were last looked for (see recoverWhileMissing). */
  private readonly missingLooks = new Map<string, number>();

  constructor(
    private readonly ctx: FollowerContext,
    /** Reads a followed file (the reader's read): recovery reads the files it finds the same way. */
    private readonly read: (f: Followed) => Promise<DrainResult>,
    private readonly deletedHoldMs = DEFAULT_DELETED_HOLD_MS,
  ) {}

  /**
   * A followed file no longer visible under its path: renamed away (rotation), deleted, replaced behind
   * a symlink, or an orphan read for recovery. It is drained, since a writer may still append until it
   * reopens, and closed once its path names another file (or it is deleted) and a poll found nothing new.
   * A file closed for the cap is first found again by identity; one found nowhere in two polls is let go
   * of (deleted while closed: what it got after the last poll that read it is lost).
   */
  async drainDetached(f: Followed): Promise<void> {
    const ctx = this.ctx;
    if (f.fh === undefined) {
      const reopened = await this.reopenMoved(f);
      if (reopened === 'deferred') return;
      if (reopened === 'gone') {
        f.idlePolls++;
        if (f.idlePolls >= 2) {
          f.end = 'deleted';
          await ctx.retire(f);
        }
        return;
      }
      f.idlePolls = 0;
    }
    // The end is looked for before draining, so that a drain finding nothing new happened after the writer
    // had already moved on to the new file: only then is the old file done with.
    if (f.end === undefined || f.end === 'deleted') {
      const end = await this.detachedEnd(f);
      if (end !== undefined && end !== f.end) {
        f.end = end;
        f.idlePolls = 0;
        if (end !== 'deleted') ctx.emit(() => ctx.events.rotated?.(f.source, f.path, end));
      }
    }
    const result = await this.read(f);
    if (ctx.stopped || ctx.followed.get(f.key) !== f || f.end === undefined) return;
    const idle = result === 'eof' && f.readThisPoll === 0;
    f.idlePolls = idle ? f.idlePolls + 1 : 0;
    f.quietSinceMs = idle ? (f.quietSinceMs ?? Date.now()) : undefined;
    // A deleted file nobody replaced yet is held longer: its writer has not reopened, and may still append.
    if (f.end === 'deleted' ? f.idlePolls >= 2 && Date.now() - (f.quietSinceMs ?? Date.now()) >= this.deletedHoldMs : f.idlePolls >= 1) await ctx.retire(f);
  }

  /** Whether a detached file is done with, and how: its path now names another file, or it was deleted. */
  private async detachedEnd(f: Followed): Promise<RotationKind | 'deleted' | undefined> {
    try {
      const st = await this.ctx.fs.stat(f.path).catch(() => undefined);
      const fh = f.fh;
      const deleted = fh === undefined ? false : (await fh.stat()).nlink === 0;
      if (st && identity(st) !== f.key) {
        if ((await this.ctx.fs.lstat(f.path).catch(() => undefined))?.isSymbolicLink()) return 'symlink';
        return deleted ? 'recreate' : 'rename';
      }
      return deleted ? 'deleted' : undefined;
    } catch (err) {
      this.ctx.problem(`read:${f.path}`, f.source, fsErrorReason(err), `${f.path}: ${errorMessage(err)}`);
      return undefined;
    }
  }

  /** A closed file no longer at its path, found again by identity (renamed by a rotation) and opened. */
  private async reopenMoved(f: Followed): Promise<'ok' | 'deferred' | 'gone'> {
    const ctx = this.ctx;
    if (!(await ctx.makeRoom())) return 'deferred';
    const found = await findFile({ path: f.path, key: f.key, head: f.head, family: f.family, state: f.end === 'orphan' ? 'orphan' : 'detached' }, ctx.scratch, ctx.index, ctx.fs);
    if (found === 'unopenable') return 'deferred';
    if (found === undefined) return 'gone';
    f.fh = found.fh;
    ctx.openFiles.touch(f);
    return 'ok';
  }

  /** Follows a file seen at `v.path` (`key`) and rotated to a sibling before it was opened, as one renamed away. */
  async followMoved(key: string, v: Visible, now: number): Promise<void> {
    const ctx = this.ctx;
    const family = await ctx.familyAt(v.path);
    const siblings = await probeSiblings(family, '', ctx.scratch, ctx.headOfFollowed, ctx.fs);
    // By identity; a compressed file with it, or one shorter than the file seen, is another file that was
    // given its freed inode (the one seen was compressed and removed meanwhile): its lines are lost.
    const s = siblings.find((c) => c.key === key && !looksCompressed(c.head) && c.size >= v.size);
    if (ctx.stopped || ctx.followed.has(key)) return;
    // Nowhere beside the path (deleted, or compressed: the .gz is a new file): what it held when seen is lost.
    if (s === undefined) return ctx.lost(v.source, v.path, v.size);
    if (!(await ctx.makeRoom())) return;
    const opened = await openSibling(s, family, ctx.scratch, ctx.fs);
    if (opened === undefined) return ctx.lost(v.source, v.path, s.size);
    if (ctx.stopped || ctx.followed.has(key)) {
      await opened.fh.close().catch(() => undefined);
      return;
    }
    const f = newFollowed({
      key,
      path: v.path,
      source: v.source,
      fh: opened.fh,
      family,
      offset: startOffset({ key, head: s.head, size: s.size }, true, ctx.known, ctx.followed.values()),
      head: s.head,
      size: s.size,
      checkedAtMs: now,
      capCheck: ctx.capNewFiles && ctx.resumedSources.has(v.source),
      splitter: ctx.newSplitter(v.source, v.path),
    });
    const before = ctx.atPath.get(v.path);
    ctx.register(f);
    ctx.openFiles.pin(f);
    try {
      ctx.notePath(v.path, key, now);
      ctx.emit(() => ctx.events.opened?.(v.source, opened.path));
      // Generations between the file the path named before and this one rotated away unseen as well.
      if (before !== undefined && before.key !== key) await this.recoverBetween(before, f, v.source, v.path);
      await this.read(f);
    } finally {
      ctx.openFiles.unpin(f);
    }
  }

  /** The generations that were at `path` after `before` and before `f` (several rotations in one poll), read from their siblings. */
  async recoverBetween(before: PathState, f: Followed, source: string, path: string): Promise<void> {
    if (!f.family) return;
    const scan: GenerationScan = {
      family: f.family,
      source,
      path,
      sinceMs: before.atMs,
      heads: [f.head],
      // A compressed file is never the file read before (compressing makes a new file), whatever its inode.
      anchor: (s) => s.key === before.key && !looksCompressed(s.head),
    };
    const siblings = await probeSiblings(scan.family, '', this.ctx.scratch, this.ctx.headOfFollowed, this.ctx.fs);
    await this.readGenerations(scan, 'rename', siblings);
  }

  /**
   * Nothing is at the configured `path`: its writer has not reopened since a rotation (a starved one), or
   * stopped before it did. The generations rotated away since the file the path last named are read now,
   * as a new file at the path would have them read: otherwise they wait for one, and the writer's last
   * files are never read if none comes. Looked at again only when the directory changed since the last look.
   */
  async recoverWhileMissing(source: string, path: string): Promise<void> {
    const ctx = this.ctx;
    const before = ctx.atPath.get(path);
    if (before === undefined || before.deleted) return;
    const family = await ctx.familyAt(path);
    // Taken before the walk: a change during it is looked at next poll.
    const dir = await ctx.fs.stat(family.dir).catch(() => undefined);
    if (dir === undefined || this.missingLooks.get(path) === dir.mtimeMs) return;
    this.missingLooks.delete(path);
    this.missingLooks.set(path, dir.mtimeMs);
    if (this.missingLooks.size > MAX_REMEMBERED_PATHS) this.missingLooks.delete(this.missingLooks.keys().next().value as string);
    const scan: GenerationScan = {
      family,
      source,
      path,
      sinceMs: before.atMs,
      heads: [],
      anchor: (s) => s.key === before.key && !looksCompressed(s.head),
    };
    const siblings = await probeSiblings(family, '', ctx.scratch, ctx.headOfFollowed, ctx.fs);
    await this.readGenerations(scan, 'rename', siblings);
  }

  /**
   * The followed file was truncated or rewritten in place. What had not been read yet is recovered from
   * a copy of the old content beside it (copytruncate), then any generation rotated away between two
   * polls, and the file is read again from its start. Bytes known to be lost are reported as skipped.
   */
  async truncated(f: Followed, p: Probe): Promise<void> {
    const ctx = this.ctx;
    // The probe's head is a view of the scratch buffer, which the sibling probes below reuse.
    const newHead = keep(p.head);
    const newSize = p.size;
    const newMtime = p.mtimeMs;
    const knownEnd = f.seenSize;
    const oldHead = f.head;
    const oldSplitter = f.splitter;
    f.splitter = ctx.newSplitter(f.source, f.path);
    const siblings = f.family ? await probeSiblings(f.family, f.key, ctx.scratch, ctx.headOfFollowed, ctx.fs) : [];
    // Copies of the old content (same start); the longest one holding bytes not read yet fills the gap.
    const copies = siblings.filter((s) => isCopyOf(s, oldHead));
    const copy = gapSource(copies, f.offset);
    let recoveredTo = f.offset;
    if (copy !== undefined && copy.size > f.offset && (await this.readOrphan(copy, f.family, f.source, f.path, f.offset, oldSplitter))) {
      recoveredTo = copy.size;
    } else {
      ctx.flush(oldSplitter, f.source, f.path);
    }
    // Copies not read from hold content already delivered: a glob reaching them must not read them again.
    for (const c of copies) if (c !== copy && !ctx.followed.has(c.key)) ctx.known.remember(c.key, c.head, c.size);
    const kind: RotationKind = copies.length > 0 ? 'copytruncate-recovered' : 'truncate';
    ctx.emit(() => ctx.events.rotated?.(f.source, f.path, kind));
    if (knownEnd > recoveredTo) ctx.emit(() => ctx.events.skipped?.(f.source, knownEnd - recoveredTo, 'truncated'));
    // A sibling starting like the new content is a copy of what is about to be read from the file itself
    // (another copytruncate since the probe): left alone, it is the gap source if that one is truncated too.
    // The generations since are the ones newer than the copy of the old content, in its naming scheme.
    if (f.family) await this.readGenerations(afterTruncation(f, f.family, oldHead, newHead, await this.headNow(f)), kind, siblings);
    f.offset = 0;
    f.head = newHead;
    // Left empty: remember what it held, for when content appears (see refilled); only a file with
    // siblings to look at needs it.
    f.emptiedFrom = newHead.length > 0 || f.family === undefined ? undefined : oldHead.length > 0 ? oldHead : f.emptiedFrom;
    f.seenSize = Math.max(newSize, newHead.length);
    f.mtimeMs = newMtime;
    // New content: a copy of it made from now on can be of any length.
    f.floor = 0;
  }

  /**
   * A file a truncation left empty has content again: appended, or copied and truncated once more since
   * the last poll, with a generation that was only ever in that copy. Nothing at the path tells the two
   * apart (an empty file has no fingerprint); the siblings do: such a generation is newer than the copy
   * of the content before the first truncation, and starts like neither.
   */
  async refilled(f: Followed, p: Probe): Promise<void> {
    const emptied = f.emptiedFrom as Buffer;
    f.emptiedFrom = undefined;
    // The probe's head is a view of the scratch buffer, which the sibling probes reuse.
    const head = keep(p.head);
    // Set only for a file with a family (truncated).
    const family = f.family as Family;
    const siblings = await probeSiblings(family, f.key, this.ctx.scratch, this.ctx.headOfFollowed, this.ctx.fs);
    await this.readGenerations(afterTruncation(f, family, emptied, head, await this.headNow(f)), 'copytruncate-recovered', siblings);
    accept(f, { ...p, head });
  }

  /**
   * The start of what the followed file holds now, after its siblings were walked: a copy made during the
   * walk (a copytruncate whose truncation has not come yet, or came after the probe) starts like it, and
   * is the content the file itself is about to be read for, not a generation. Empty when it cannot be read.
   */
  private async headNow(f: Followed): Promise<Buffer> {
    if (f.fh === undefined) return Buffer.alloc(0);
    return keep(await readHead(f.fh, this.ctx.scratch).catch(() => Buffer.alloc(0)));
  }

  /** Reads the generations among the siblings that rotated away unseen (see generationsToRead); counts those lost. */
  private async readGenerations(scan: GenerationScan, kind: RotationKind, siblings: Sibling[]): Promise<void> {
    const ctx = this.ctx;
    const { todo, lost } = generationsToRead(scan, siblings, (key) => ctx.followed.has(key) || ctx.visible.has(key), ctx.known);
    const told = new Set<string>();
    for (const gone of lost) {
      ctx.emit(() => ctx.events.rotated?.(scan.source, scan.path, 'unrecovered'));
      // Compressed: its size is known (gzip's is in its trailer); gone by then: not even that.
      if (gone === undefined) continue;
      told.add(gone.key);
      ctx.known.remember(gone.key, gone.head, gone.size);
      ctx.lost(scan.source, gone.path, await contentBytes(gone, ctx.fs));
    }
    // A gzip generation new since the last look that starts (decompressed) like nothing read was
    // compressed before any read (logrotate compress without delaycompress, several rotations per poll):
    // lost, and counted. Either way it is remembered, so a later look does not tell it again.
    for (const gz of newCompressed(scan, siblings, (key) => ctx.followed.has(key) || ctx.visible.has(key), ctx.known)) {
      if (told.has(gz.key)) continue;
      const start = gunzipStart(gz.head);
      if (start.length === 0) continue;
      ctx.known.remember(gz.key, gz.head, gz.size);
      if (scan.heads.some((h) => h.length > 0 && sameStart(h, start)) || (await ctx.wasRead(start))) continue;
      ctx.emit(() => ctx.events.rotated?.(scan.source, scan.path, 'unrecovered'));
      ctx.lost(scan.source, gz.path, await contentBytes(gz, ctx.fs));
    }
    // Stopping does not cut this short: each generation is registered (and reads stop at once), so the
    // final checkpoint holds them all.
    for (const { s, from } of todo) {
      if (ctx.followed.has(s.key)) continue;
      ctx.emit(() => ctx.events.rotated?.(scan.source, scan.path, kind));
      const read = await this.readOrphan(s, scan.family, scan.source, scan.path, from, ctx.newSplitter(scan.source, scan.path));
      if (!read) {
        ctx.emit(() => ctx.events.rotated?.(scan.source, scan.path, 'unrecovered'));
        ctx.lost(scan.source, s.path, s.size - from);
      }
    }
  }

  /**
   * Reads a sibling from `from` for a source, as a followed file of its own that is let go of once a
   * poll finds nothing new in it. A sibling already followed (a glob matches it) is rewound. False when
   * it could not be opened (gone since it was probed, or no descriptor to spare).
   */
  private async readOrphan(s: Sibling, family: Family | undefined, source: string, path: string, from: number, splitter: LineSplitter): Promise<boolean> {
    const ctx = this.ctx;
    const existing = ctx.followed.get(s.key);
    if (existing !== undefined) {
      if (from < existing.offset) {
        ctx.flush(existing.splitter, existing.source, existing.path);
        existing.offset = from;
        existing.splitter = splitter;
      } else {
        ctx.flush(splitter, source, path);
      }
      await this.read(existing);
      return true;
    }
    const opened = (await ctx.makeRoom()) ? await openSibling(s, family, ctx.scratch, ctx.fs) : undefined;
    if (opened === undefined) {
      ctx.flush(splitter, source, path);
      return false;
    }
    ctx.known.forget(s.key);
    const o = newFollowed({
      key: s.key,
      path: opened.path,
      source,
      fh: opened.fh,
      family: undefined,
      offset: from,
      head: s.head,
      size: s.size,
      checkedAtMs: Date.now(),
      capCheck: ctx.capNewFiles && ctx.resumedSources.has(source),
      end: 'orphan',
      splitter,
    });
    ctx.register(o);
    await this.read(o);
    return true;
  }
}

/**
 * Where the generations of a file truncated in place are looked for: siblings newer than the copy of the
 * content it held (`oldHead`), starting like neither that content nor the one it holds now (`newHead`).
 */
function afterTruncation(f: Followed, family: Family, oldHead: Buffer, newHead: Buffer, headNow: Buffer): GenerationScan {
  return { family, source: f.source, path: f.path, sinceMs: f.checkedAtMs, heads: [oldHead, newHead, headNow], anchor: (s) => isCopyOf(s, oldHead) };
}
