// The reader of one followed file, alone: no poller, no rotation recovery (a stand-in records what it is
// handed). It reads from the file's offset through the shared buffer, stops at the per-poll budget, and
// hands a file truncated in place on instead of reading it as an append.
import { ftruncateSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileReader, type TruncationHandler } from '../../../src/source/file-reader.js';
import { FollowerContext } from '../../../src/source/follower-context.js';
import { identity, keep, readHead } from '../../../src/source/file-identity.js';
import { accept, newFollowed, type Followed, type Probe } from '../../../src/source/followed-file.js';
import { SeqSink, SeqWriter, seqLine } from '../../helpers/sequence-log.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** Records the changes the reader hands on; on a truncation it sets the file to be read from its start, as recovery does. */
class Changes implements TruncationHandler {
  readonly seen: Array<{ kind: 'truncated' | 'refilled'; size: number }> = [];
  async truncated(f: Followed, p: Probe): Promise<void> {
    this.seen.push({ kind: 'truncated', size: p.size });
    f.offset = 0;
    f.head = keep(p.head);
    f.seenSize = p.size;
    f.splitter = ctxOf(f).newSplitter(f.source, f.path);
  }
  async refilled(f: Followed, p: Probe): Promise<void> {
    this.seen.push({ kind: 'refilled', size: p.size });
    accept(f, p);
  }
}

const contexts = new WeakMap<Followed, FollowerContext>();
const ctxOf = (f: Followed): FollowerContext => contexts.get(f) as FollowerContext;

async function setUp(readChunkBytes = 4096, maxReadBytesPerPoll = 1 << 20) {
  const dir = tempDir('zpe-reader-');
  const path = join(dir, 'app.log');
  const w = new SeqWriter(path);
  const sink = new SeqSink();
  const ctx = new FollowerContext({ maxLineBytes: 4096, readChunkBytes, maxOpenFiles: 16, restoredFiles: 0 }, sink, sink);
  const changes = new Changes();
  const reader = new FileReader(ctx, { maxReadBytesPerPoll, catchUpCap: Number.POSITIVE_INFINITY }, changes);
  const fh = await open(path, 'r');
  const st = await fh.stat();
  const f = newFollowed({
    key: identity(st),
    path,
    source: path,
    fh,
    family: undefined,
    offset: 0,
    head: keep(await readHead(fh, ctx.scratch)),
    size: st.size,
    checkedAtMs: Date.now(),
    capCheck: false,
    splitter: ctx.newSplitter(path, path),
  });
  contexts.set(f, ctx);
  ctx.register(f);
  return {
    w,
    sink,
    ctx,
    reader,
    changes,
    f,
    close: (): Promise<void> => {
      w.close();
      return fh.close();
    },
  };
}

describe('FileReader', () => {
  it('reads what is new from the offset, line by line, and nothing twice', async () => {
    const t = await setUp();
    try {
      t.w.write(10);
      expect(await t.reader.read(t.f)).toBe('eof');
      t.w.write(5);
      expect(await t.reader.read(t.f)).toBe('eof');
      expect(await t.reader.read(t.f)).toBe('eof');
      t.sink.expectExactlyOnce(15);
      expect(t.changes.seen).toEqual([]);
    } finally {
      await t.close();
    }
  });

  it('stops at the per-poll budget and says there is more (the poller then polls again at once)', async () => {
    const t = await setUp(64, 256);
    try {
      t.w.write(100);
      expect(await t.reader.read(t.f)).toBe('more');
      expect(t.ctx.budgetHit).toBe(true);
      expect(t.f.offset).toBe(256);
      while ((await t.reader.read(t.f)) === 'more');
      t.sink.expectExactlyOnce(100);
    } finally {
      await t.close();
    }
  });

  it('a file truncated in place is handed on as a truncation, not read as an append of the new content', async () => {
    const t = await setUp();
    try {
      t.w.write(20);
      await t.reader.read(t.f);
      ftruncateSync(t.w.current, 0);
      // Shorter new content at the start: the offset (past it) would read nothing, and an append check would miss it.
      t.w.write(1);
      await t.reader.read(t.f);
      expect(t.changes.seen).toEqual([{ kind: 'truncated', size: seqLine(21).length + 1 }]);
      t.sink.expectExactlyOnce(21);
    } finally {
      await t.close();
    }
  });
});
