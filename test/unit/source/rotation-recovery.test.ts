// Rotation recovery alone, on a real directory: a followed file registered by hand (no poller, no scan),
// the reader wired to it, and one rotation made between two reads. What recovery must find: the unread
// end of a truncated file in the copy beside it, and the unread end of a file renamed away.
import { copyFileSync, ftruncateSync, renameSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileReader } from '../../../src/source/file-reader.js';
import { FollowerContext } from '../../../src/source/follower-context.js';
import { identity, keep, readHead } from '../../../src/source/file-identity.js';
import { newFollowed } from '../../../src/source/followed-file.js';
import { familyOf } from '../../../src/source/rotation-family.js';
import { RotationRecovery } from '../../../src/source/rotation-recovery.js';
import { SeqSink, SeqWriter } from '../../helpers/sequence-log.js';
import { tempDir } from '../../helpers/temp-dir.js';

async function setUp() {
  const dir = tempDir('zpe-recovery-');
  const path = join(dir, 'app.log');
  const w = new SeqWriter(path);
  const sink = new SeqSink();
  const ctx = new FollowerContext({ maxLineBytes: 4096, readChunkBytes: 4096, maxOpenFiles: 16, restoredFiles: 0 }, sink, sink);
  const recovery: RotationRecovery = new RotationRecovery(ctx, (f) => reader.read(f));
  const reader = new FileReader(ctx, { maxReadBytesPerPoll: 1 << 20, catchUpCap: Number.POSITIVE_INFINITY }, recovery);
  const fh = await open(path, 'r');
  const st = await fh.stat();
  const f = newFollowed({
    key: identity(st),
    path,
    source: path,
    fh,
    family: await familyOf(path),
    offset: 0,
    head: keep(await readHead(fh, ctx.scratch)),
    size: st.size,
    checkedAtMs: Date.now(),
    capCheck: false,
    splitter: ctx.newSplitter(path, path),
  });
  ctx.register(f);
  const stop = async () => {
    for (const g of [...ctx.followed.values()]) await ctx.openFiles.park(g);
    w.close();
  };
  return { path, w, sink, ctx, reader, recovery, f, stop };
}

describe('RotationRecovery', () => {
  it('copytruncate: the lines not read before the truncation are read from the copy, then the new content, each once', async () => {
    const t = await setUp();
    try {
      t.w.write(10);
      await t.reader.read(t.f);
      t.w.write(5); // not read yet: only the copy will hold them
      copyFileSync(t.path, `${t.path}.1`);
      ftruncateSync(t.w.current, 0);
      t.w.write(2);
      await t.reader.read(t.f);
      t.sink.expectExactlyOnce(17);
      expect(t.sink.rotations.map((r) => r.kind)).toEqual(['copytruncate-recovered']);
    } finally {
      await t.stop();
    }
  });

  it('a file renamed away is drained to its end, then let go of once the path names another file and a poll found nothing new', async () => {
    const t = await setUp();
    try {
      t.w.write(10);
      await t.reader.read(t.f);
      t.w.write(3);
      renameSync(t.path, `${t.path}.1`);
      t.w.write(2); // late lines, through the writer's old descriptor
      t.w.reopen();
      await t.recovery.drainDetached(t.f);
      expect(t.ctx.followed.has(t.f.key)).toBe(true);
      t.f.readThisPoll = 0; // the next poll begins (the poller resets it)
      await t.recovery.drainDetached(t.f);
      expect(t.ctx.followed.has(t.f.key)).toBe(false);
      t.sink.expectExactlyOnce(15);
      expect(t.sink.rotations.map((r) => r.kind)).toEqual(['rename']);
    } finally {
      await t.stop();
    }
  });
});
