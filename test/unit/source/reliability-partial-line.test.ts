// A line is delivered only once its newline is written, however the bytes arrive across polls; bytes are
// held raw, so a UTF-8 character cut between two polls decodes whole. A last line without a newline is
// delivered as it is only when no more can come (its file was rotated away, deleted or truncated), and
// reported through `partialLine`. A line past the limit is skipped without being held whole.
import { appendFileSync, copyFileSync, ftruncateSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { followerFixture } from '../../helpers/follower-fixture.js';
import { seqBlock, seqLine } from '../../helpers/sequence-log.js';

describe('partial lines', () => {
  const fx = followerFixture({ prefix: 'zpe-partial-' });

  it('one byte per poll: each line arrives whole, exactly when its newline does', async () => {
    const { sink, w } = fx;
    const follower = await fx.follow();
    const text = seqBlock(1, 3);
    for (let i = 0; i < text.length; i++) {
      w.raw(text[i]!);
      await follower.pollOnce();
      const newlines = text.slice(0, i + 1).split('\n').length - 1;
      expect(sink.distinct).toBe(newlines);
    }
    sink.expectExactlyOnce(3);
    expect(sink.partials).toEqual([]);
  });

  it('a multibyte character cut between two polls decodes whole', async () => {
    const { path } = fx;
    const lines: string[] = [];
    const follower = await fx.follow({}, { line: (t) => void lines.push(t), oversize: () => undefined });
    const line = Buffer.from('{"seq":1,"model":"日本語😀é","latency_ms":150}\n');
    for (let i = 0; i < line.length; i++) {
      appendFileSync(path, line.subarray(i, i + 1));
      await follower.pollOnce();
    }
    expect(lines).toEqual([line.toString('utf8').trimEnd()]);
  });

  it('CRLF split between \\r and \\n across polls: one line, no \\r', async () => {
    const { sink, w } = fx;
    const follower = await fx.follow();
    w.raw(seqLine(1) + '\r');
    await follower.pollOnce();
    expect(sink.distinct).toBe(0);
    w.raw('\n' + seqLine(2) + '\r\n');
    await follower.pollOnce();
    sink.expectExactlyOnce(2);
  });

  it('a partial line is held across many polls, then completed', async () => {
    const { sink, w } = fx;
    const follower = await fx.follow();
    w.write(2);
    const half = w.startLine();
    for (let i = 0; i < 20; i++) await follower.pollOnce();
    expect(sink.distinct).toBe(2);
    half.finish();
    w.write(2);
    await follower.pollOnce();
    sink.expectExactlyOnce(5);
  });

  it('renamed away with an unterminated last line: delivered as it is once the old file is let go of', async () => {
    const { path, sink, w } = fx;
    // (held while the writer may still complete it: see the rename rotation tests)
    const follower = await fx.follow();
    w.write(3);
    w.raw(seqLine(4)); // the writer never ends it
    await follower.pollOnce();
    renameSync(path, `${path}.1`);
    w.next = 5;
    w.reopen();
    w.write(2);
    // The writer has moved to the new file and the old one has nothing new: let go of, the line delivered.
    await follower.pollOnce();
    sink.expectExactlyOnce(6);
    expect(sink.partials).toEqual([path]);
  });

  it('truncated with an unterminated last line and no copy: delivered before the new content', async () => {
    const { path, sink, w } = fx;
    const follower = await fx.follow();
    w.write(3);
    w.raw(seqLine(4));
    w.next = 5;
    await follower.pollOnce();
    ftruncateSync(w.current, 0);
    w.write(2);
    await follower.pollOnce();
    sink.expectExactlyOnce(6);
    expect(sink.order).toEqual([1, 2, 3, 4, 5, 6]);
    expect(sink.partials).toEqual([path]);
  });

  it('copytruncate while a line is half read: its end comes from the copy, one whole line', async () => {
    const { path, sink, w } = fx;
    const follower = await fx.follow();
    w.write(3);
    const half = w.startLine();
    await follower.pollOnce(); // holds half of line 4
    half.finish();
    w.write(2);
    copyFileSync(path, `${path}.1`);
    ftruncateSync(w.current, 0);
    w.write(3);
    await follower.pollOnce();
    await follower.pollOnce();
    sink.expectExactlyOnce(9);
    expect(sink.partials).toEqual([]);
  });

  it('deleted with an unterminated last line: delivered once the file is let go of', async () => {
    const { path, sink, w } = fx;
    // Let go of at the second poll that finds nothing (no hold for a starved writer: deletedHoldMs 0).
    const follower = await fx.follow({ deletedHoldMs: 0 });
    w.write(1);
    w.raw(seqLine(2));
    await follower.pollOnce();
    unlinkSync(path);
    for (let i = 0; i < 3; i++) await follower.pollOnce();
    sink.expectExactlyOnce(2);
    expect(sink.partials).toEqual([path]);
  });

  it('stopping with a partial line pending does not deliver it', async () => {
    const { sink, w } = fx;
    const follower = await fx.follow();
    w.write(1);
    w.raw(seqLine(2));
    await follower.pollOnce();
    await follower.stop();
    sink.expectExactlyOnce(1);
  });

  it('a line growing past the limit over many polls is skipped once, never held whole; the next line is whole', async () => {
    const { sink, w } = fx;
    const follower = await fx.follow({ maxLineBytes: 256, readChunkBytes: 64 });
    w.write(1);
    w.raw('{"seq":2,"pad":"');
    for (let i = 0; i < 50; i++) {
      w.raw('x'.repeat(100));
      await follower.pollOnce();
    }
    w.raw('"}\n');
    w.next = 3;
    w.write(2);
    await follower.pollOnce();
    expect(sink.oversizes).toBe(1);
    expect(sink.audit(4)).toEqual({ missing: [2], duplicated: [] });
  });

  it('startAt end while a line is being written: the line is delivered whole', async () => {
    const { path, sink } = fx;
    writeFileSync(path, seqBlock(1, 10) + seqLine(11).slice(0, 7));
    const follower = await fx.follow({ startAt: 'end' });
    appendFileSync(path, seqLine(11).slice(7) + '\n' + seqBlock(12, 12));
    await follower.pollOnce();
    expect(sink.audit(12)).toEqual({ missing: [...Array(10).keys()].map((i) => i + 1), duplicated: [] });
  });
});
