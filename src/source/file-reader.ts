// Reading one followed file: what is new since its offset, one chunk at a time through the shared buffer,
// handed on to its line splitter. Each probe (size and fingerprint, before reading and after every chunk)
// checks that it still holds the content read so far: a file truncated or rewritten in place is handed to
// rotation recovery, which reads what was lost from a copy and has the file read again from its start.
import { errorMessage, fsErrorReason } from './fs-error-reason.js';
import { FINGERPRINT_BYTES, identity, readHead } from './file-identity.js';
import type { FollowerHandle } from './follower-fs.js';
import { accept, refills, wasReplaced, type Followed, type Probe } from './followed-file.js';
import type { DrainResult, FollowerContext } from './follower-context.js';
import { nextLineStart } from './line-start.js';

/** What the reader hands on when a file's content changed under it (rotation recovery, or a test's stand-in). */
export interface TruncationHandler {
  /** The file was truncated or rewritten in place (`p` shows it now): recover what it lost, and set it to be read from its start. */
  truncated(f: Followed, p: Probe): Promise<void>;
  /** A file a truncation left empty has content again (`p`): read the generations it may come after, then accept it. */
  refilled(f: Followed, p: Probe): Promise<void>;
}

export interface ReaderOptions {
  /** Bytes read per file and poll, so one fast-growing file cannot starve the others. */
  maxReadBytesPerPoll: number;
  /** After a restore: files further behind their end than this resume within it (the rest is reported skipped). */
  catchUpCap: number;
}

export class FileReader {
  private readonly oneByte = Buffer.alloc(1);

  constructor(
    private readonly ctx: FollowerContext,
    private readonly o: ReaderOptions,
    private readonly onChange: TruncationHandler,
  ) {}

  /**
   * Reads what is new in a followed file, up to the per-poll budget. A file closed for the cap is opened
   * again at its path first ('deferred' when that cannot be done now).
   */
  async read(f: Followed): Promise<DrainResult> {
    if (f.fh === undefined && (await this.reopenAtPath(f)) === 'deferred') return 'deferred';
    this.ctx.openFiles.pin(f);
    try {
      return await this.readOpen(f);
    } finally {
      this.ctx.openFiles.unpin(f);
    }
  }

  private async readOpen(f: Followed): Promise<DrainResult> {
    const ctx = this.ctx;
    const before = await this.probe(f);
    if (before === undefined) return 'error';
    if (wasReplaced(f, before) || (await this.holeUnder(f))) await this.onChange.truncated(f, before);
    else if (refills(f, before)) await this.onChange.refilled(f, before);
    else accept(f, before);
    let budget = this.o.maxReadBytesPerPoll;
    try {
      if (f.capCheck) {
        f.capCheck = false;
        await this.capCatchUp(f, before.size);
      }
      while (budget > 0 && !ctx.stopped) {
        const fh = f.fh;
        // Closed under it (rotation recovery needed the descriptor): opened again on its next poll.
        if (fh === undefined) return 'deferred';
        const { bytesRead } = await fh.read(ctx.buf, 0, Math.min(ctx.buf.length, budget), f.offset);
        if (bytesRead === 0) return 'eof';
        budget -= bytesRead;
        const after = await this.probe(f);
        if (after === undefined) return 'error';
        // Shorter now than what was just read: truncated after the read, even when nothing seen before
        // tells it (a file read from empty, with no fingerprint yet).
        const shrunk = after.size < f.offset + bytesRead;
        if (shrunk || wasReplaced(f, after)) {
          // Truncated while the chunk was read: the chunk is old content if the new content is too short
          // to have supplied it; otherwise it is dropped (the copy, if any, holds the old bytes).
          // A chunk that overlaps the fingerprint and differs from it is content of a later generation
          // (truncated and written again before the read): never the old content's.
          if (shrunk && this.chunkAgrees(f, bytesRead)) this.take(f, bytesRead);
          await this.onChange.truncated(f, after);
          continue;
        }
        if (refills(f, after)) {
          // Read again after the generations it may come after (their reads reuse the buffer).
          await this.onChange.refilled(f, after);
          continue;
        }
        accept(f, after);
        this.take(f, bytesRead);
      }
    } catch (err) {
      ctx.problem(`read:${f.path}`, f.source, 'read_error', `${f.path}: ${errorMessage(err)}`);
      return 'error';
    }
    if (budget <= 0) ctx.budgetHit = true;
    return 'more';
  }

  /**
   * After a restore: a file more than the catch-up cap behind its end resumes at the first line start
   * within the cap of its end; what is passed over (a held partial line included) is reported as skipped.
   */
  private async capCatchUp(f: Followed, size: number): Promise<void> {
    if (size - f.offset <= this.o.catchUpCap || f.fh === undefined) return;
    const from = f.offset - f.splitter.pendingBytes;
    const target = size - this.o.catchUpCap;
    // A line start is looked for within a line's length; past that, the line is dropped to its end.
    const limit = Math.min(size, target + this.ctx.maxLineBytes + 2);
    const start = await nextLineStart(f.fh, target, limit, this.ctx.buf);
    f.splitter = this.ctx.newSplitter(f.source, f.path);
    if (start === undefined) f.splitter.skipToNextLine();
    f.offset = start ?? limit;
    f.lastByte = undefined;
    const bytes = f.offset - from;
    this.ctx.emit(() => this.ctx.events.skipped?.(f.source, bytes, 'catch_up_cap'));
  }

  /**
   * A file that starts with a hole (truncated once under a writer that does not append, as Caddy's log)
   * keeps starting with NULs when it is truncated again, and the writer's next line lands past what was
   * read: size and fingerprint look like an append. What tells it is the byte last read, now a NUL.
   */
  private async holeUnder(f: Followed): Promise<boolean> {
    if (f.head[0] !== 0 || f.lastByte === undefined || f.lastByte === 0 || f.offset === 0 || f.fh === undefined) return false;
    try {
      const { bytesRead } = await f.fh.read(this.oneByte, 0, 1, f.offset - 1);
      return bytesRead === 0 || this.oneByte[0] === 0;
    } catch {
      return false; // the read of the file itself reports it
    }
  }

  /** Whether the chunk just read (in the shared buffer, from `f.offset`) holds what the fingerprint says is there, where the two overlap. */
  private chunkAgrees(f: Followed, bytes: number): boolean {
    const n = Math.min(f.head.length, f.offset + bytes) - f.offset;
    return n <= 0 || this.ctx.buf.compare(f.head, f.offset, f.offset + n, 0, n) === 0;
  }

  /** Hands the chunk just read (in the shared buffer) on to the file's splitter and moves its offset past it. */
  private take(f: Followed, bytes: number): void {
    const ctx = this.ctx;
    if (bytes > 0) f.lastByte = ctx.buf[bytes - 1];
    // The fingerprint grows with what is read of it: a copy of this content made before the next probe is
    // then told by it (a file read from empty has none until a probe sees it whole).
    if (f.head.length < FINGERPRINT_BYTES && f.offset <= f.head.length && f.offset + bytes > f.head.length) {
      const more = ctx.buf.subarray(f.head.length - f.offset, Math.min(bytes, FINGERPRINT_BYTES - f.offset));
      f.head = Buffer.concat([f.head, more]);
    }
    f.offset += bytes;
    f.readThisPoll += bytes;
    ctx.readThisCycle += bytes;
    if (f.offset > f.seenSize) f.seenSize = f.offset;
    ctx.openFiles.touch(f);
    f.splitter.push(ctx.buf.subarray(0, bytes));
  }

  private async probe(f: Followed): Promise<Probe | undefined> {
    const fh = f.fh;
    if (fh === undefined) return undefined;
    try {
      const { size, mtimeMs } = await fh.stat();
      // Not written since the last probe, and the fingerprint already complete: no need to read it again.
      if (size === f.seenSize && mtimeMs === f.mtimeMs && f.head.length === Math.min(size, FINGERPRINT_BYTES)) {
        return { size, mtimeMs, head: f.head };
      }
      const head = await readHead(fh, this.ctx.scratch);
      // The head read met the end before the fingerprint's length and before the size just seen: the file
      // was truncated between the stat and the read (copytruncate). It held head.length bytes then; the stat's
      // larger size would pass an empty or short head for an append, and old content for new.
      return { size: head.length < Math.min(size, FINGERPRINT_BYTES) ? head.length : size, mtimeMs, head };
    } catch (err) {
      this.ctx.problem(`read:${f.path}`, f.source, 'read_error', `${f.path}: ${errorMessage(err)}`);
      return undefined;
    }
  }

  /** A closed file at its path, opened again if it is still the same file there (the read that follows probes its content). */
  private async reopenAtPath(f: Followed): Promise<'ok' | 'deferred'> {
    let fh: FollowerHandle | undefined;
    try {
      fh = await this.ctx.openCapped(f.path);
    } catch (err) {
      this.ctx.problem(`read:${f.path}`, f.source, fsErrorReason(err), `${f.path}: ${errorMessage(err)}`);
      return 'deferred';
    }
    if (fh === undefined) return 'deferred';
    const st = await fh.stat().catch(() => undefined);
    if (st === undefined || identity(st) !== f.key) {
      // Replaced since the scan's stat: the next poll sees the rotation.
      await fh.close().catch(() => undefined);
      return 'deferred';
    }
    f.fh = fh;
    this.ctx.openFiles.touch(f);
    return 'ok';
  }
}
