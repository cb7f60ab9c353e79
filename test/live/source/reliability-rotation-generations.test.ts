// Generations rotated away between two polls are never seen at the path: rotation recovery reads them from
// beside it. Only true generations: the file the path named before is found by identity (or as a copy of
// its content) and the generations are the siblings of its naming scheme newer than it, whatever the
// depth. A sibling named like one but of no rotation scheme (`app.log-canary`, `app.log.count`), however
// recently written, is never read for `app.log` (it was read whole: 750 counted where 200 was right). A
// generation the scheme says existed and that is gone is counted as lost, not silently skipped.
import { copyFileSync, existsSync, ftruncateSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { followerFixture } from '../../helpers/follower-fixture.js';
import { seqBlock, sleep, startChildWriter } from '../../helpers/sequence-log.js';

/** logrotate's numbered shift: NAME.k → NAME.k+1 (oldest first), then NAME → NAME.1. */
function rotate(path: string): void {
  let k = 1;
  while (existsSync(`${path}.${k}`)) k++;
  for (; k > 1; k--) renameSync(`${path}.${k - 1}`, `${path}.${k}`);
  renameSync(path, `${path}.1`);
}

/** Siblings named like generations of app.log, of no rotation scheme, written just now. */
function unrelatedSiblings(dir: string): void {
  writeFileSync(join(dir, 'app.log-canary'), seqBlock(100_001, 100_300));
  writeFileSync(join(dir, 'app.log.count'), seqBlock(200_001, 200_250));
  writeFileSync(join(dir, 'app.log.1.bak'), seqBlock(300_001, 300_010));
}

describe('rotation recovery: siblings that are not generations are never read', () => {
  const fx = followerFixture({ prefix: 'zpe-gen-', started: true, checkFds: true });

  it('a rename rotation next to app.log-canary and app.log.count written just now: 200 lines, not 750', async () => {
    const { dir, path, sink, w, follower } = fx;
    w.write(100);
    await follower.pollOnce();
    w.write(50);
    rotate(path);
    unrelatedSiblings(dir);
    w.reopen();
    w.write(50);
    await follower.pollOnce();
    await follower.pollOnce();
    sink.expectExactlyOnce(200);
    expect(sink.rotations.map((r) => r.kind)).toEqual(['rename']);
  });

  it('two rotations inside one poll: the generation in between is read, the unrelated siblings are not', async () => {
    const { dir, path, sink, w, follower } = fx;
    w.write(10);
    await follower.pollOnce();
    rotate(path);
    w.reopen();
    w.write(20); // app.log.1 after the second rotation, never seen at the path
    unrelatedSiblings(dir);
    rotate(path);
    w.reopen();
    w.write(5);
    await follower.pollOnce();
    await follower.pollOnce();
    sink.expectExactlyOnce(35);
  });

  it('two copytruncates inside one poll: the gap from the copy, the generation whole, the unrelated siblings not at all', async () => {
    const { dir, path, sink, w, follower } = fx;
    const copytruncate = () => {
      if (existsSync(`${path}.1`)) renameSync(`${path}.1`, `${path}.2`);
      copyFileSync(path, `${path}.1`);
      ftruncateSync(w.current, 0);
    };
    w.write(30);
    await follower.pollOnce();
    w.write(10);
    copytruncate();
    w.write(25);
    unrelatedSiblings(dir);
    copytruncate();
    w.write(5);
    await follower.pollOnce();
    await follower.pollOnce();
    sink.expectExactlyOnce(70);
  });

  it('a file truncated with no copy beside it: the unrelated siblings are not taken for one', async () => {
    const { dir, sink, w, follower } = fx;
    w.write(20);
    await follower.pollOnce();
    unrelatedSiblings(dir);
    ftruncateSync(w.current, 0);
    w.write(5);
    await follower.pollOnce();
    expect([...sink.counts.keys()].filter((n) => n > 25)).toEqual([]);
    expect(sink.rotations.map((r) => r.kind)).toEqual(['truncate']);
  });
});

describe('numbered rotation: shifts of any depth inside one poll', () => {
  const fx = followerFixture({ prefix: 'zpe-depth-', started: true, checkFds: true });

  it.each([1, 2, 3, 4, 6, 9, 12])('%i rotations between two polls, every generation still written late: every line exactly once', async (depth) => {
    const { path, sink, w, follower } = fx;
    w.write(10);
    await follower.pollOnce();
    const generations: number[] = [];
    for (let r = 0; r < depth; r++) {
      rotate(path);
      generations.push(w.reopen());
      w.write(7);
      // A late flush to a generation rotated away before this one (an old descriptor still written).
      if (generations.length > 1) w.write(2, generations[generations.length - 2]);
    }
    await follower.pollOnce();
    w.write(3);
    await follower.pollOnce();
    await follower.pollOnce();
    sink.expectExactlyOnce(10 + depth * 7 + Math.max(0, depth - 1) * 2 + 3);
    expect(sink.rotations.filter((r) => r.kind === 'unrecovered')).toEqual([]);
    expect(existsSync(`${path}.${depth}`)).toBe(true);
  });

  it('a generation compressed before a poll saw it: its lines are lost, and counted as an unrecovered rotation', async () => {
    const { path, sink, w, follower } = fx;
    w.write(10);
    await follower.pollOnce();
    rotate(path);
    w.reopen();
    w.write(5); // 11..15, in the generation compressed below
    rotate(path);
    w.reopen();
    w.write(6); // 16..21
    rotate(path);
    w.reopen();
    w.write(4); // 22..25, at the path
    // What logrotate's `compress` does to a generation: app.log.2 → app.log.2.gz.
    writeFileSync(`${path}.2.gz`, gzipSync(readFileSync(`${path}.2`)));
    unlinkSync(`${path}.2`);
    await follower.pollOnce();
    await follower.pollOnce();
    expect(sink.audit(25)).toEqual({ missing: [11, 12, 13, 14, 15], duplicated: [] });
    expect(sink.rotations.filter((r) => r.kind === 'unrecovered')).toEqual([{ path, kind: 'unrecovered' }]);
  });

  it.each([2, 3, 5])('%i copytruncates between two polls: the gap from the oldest copy, every generation after it whole', async (depth) => {
    const { path, sink, w, follower } = fx;
    const copytruncate = () => {
      let k = 1;
      while (existsSync(`${path}.${k}`)) k++;
      for (; k > 1; k--) renameSync(`${path}.${k - 1}`, `${path}.${k}`);
      copyFileSync(path, `${path}.1`);
      ftruncateSync(w.current, 0);
    };
    w.write(20);
    await follower.pollOnce();
    w.write(5);
    for (let r = 0; r < depth; r++) {
      copytruncate();
      w.write(8);
    }
    await follower.pollOnce();
    await follower.pollOnce();
    sink.expectExactlyOnce(25 + depth * 8);
  });
});

describe('numbered rotation, free-running at about four rotations per poll', () => {
  const fx = followerFixture({ prefix: 'zpe-depth-run-', writer: false });

  it('a child process appending steadily, rotated every ~25 ms and signalled to reopen, polled every 100 ms', async () => {
    const { path, sink } = fx;
    const writer = await startChildWriter(path, { linesPerMs: 2 });
    const follower = await fx.follow({ patterns: [path], pollIntervalMs: 100 });
    let rotations = 0;
    const until = Date.now() + 1500;
    while (Date.now() < until) {
      await sleep(25);
      if (!existsSync(path)) continue; // the writer has not reopened since the last rotation
      rotate(path);
      writer.hup();
      rotations++;
    }
    const { last } = await writer.stop();
    // Nothing changes on disk any more: once two polls in a row find nothing new, the follower has read all
    // it ever will (however long a starved machine takes to get there), and the audit says what is missing.
    for (let quiet = 0; quiet < 2;) {
      const delivered = sink.order.length;
      await follower.pollOnce();
      quiet = sink.order.length === delivered ? quiet + 1 : 0;
    }
    expect(rotations).toBeGreaterThan(30);
    sink.expectExactlyOnce(last);
  }, 20_000);
});
