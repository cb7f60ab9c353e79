// A symlink switched to a new target (`current.log -> app-2.log`), atomically (new link renamed over the
// old one). The follower follows the target's identity: the old target is drained to its end (its writer
// may still flush to it), then let go of; switching back to a target read before resumes where it stopped.
import { mkdirSync, renameSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { followerFixture } from '../../helpers/follower-fixture.js';
import { fdsInto, type SeqWriter } from '../../helpers/sequence-log.js';

/** Points `link` at `target` atomically, the way deploy tools and loggers do. */
function pointAt(link: string, target: string): void {
  const tmp = `${link}.tmp-${process.pid}`;
  symlinkSync(target, tmp);
  renameSync(tmp, link);
}

describe.each([
  ['targets beside the link', false],
  ['targets in another directory', true],
])('symlink switch, %s', (_name, elsewhere) => {
  const fx = followerFixture({ prefix: 'zpe-symlink-', name: 'current.log', writer: false, checkFds: true });
  let targets: string;
  /** One writer per target file, sharing one sequence. */
  let next = 1;
  const target = (n: number): string => join(targets, `app-${n}.log`);
  const writerFor = (n: number): SeqWriter => fx.writer(target(n));
  const write = (w: SeqWriter, count: number): void => {
    w.next = next;
    next = w.write(count) + 1;
  };

  beforeEach(() => {
    targets = elsewhere ? join(fx.dir, 'data') : fx.dir;
    if (elsewhere) mkdirSync(targets);
    next = 1;
  });

  it('drains the old target, then reads the new one from its start', async () => {
    const { dir, path: link, sink } = fx;
    const a = writerFor(1);
    pointAt(link, target(1));
    const follower = await fx.follow();
    write(a, 30);
    await follower.pollOnce();
    write(a, 10); // not read yet
    const b = writerFor(2);
    pointAt(link, target(2));
    write(a, 5); // a late flush to the old target
    write(b, 20);
    await follower.pollOnce();
    write(b, 5);
    await follower.pollOnce();
    sink.expectExactlyOnce(70);
    expect(sink.rotations).toEqual([{ path: link, kind: 'symlink' }]);
    expect(sink.errors).toEqual([]);
    // The old target is let go of once a poll finds nothing new in it: only the writers' descriptors remain.
    expect(fdsInto(dir).length).toBe(2 + 1);
  });

  it('keeps draining an old target its writer still flushes to, over several polls', async () => {
    const { path: link, sink } = fx;
    const a = writerFor(1);
    pointAt(link, target(1));
    const follower = await fx.follow();
    write(a, 10);
    await follower.pollOnce();
    const b = writerFor(2);
    pointAt(link, target(2));
    for (let i = 0; i < 5; i++) {
      write(a, 3);
      write(b, 4);
      await follower.pollOnce();
    }
    await follower.pollOnce();
    await follower.pollOnce();
    sink.expectExactlyOnce(45);
  });

  it('switched back to a target read before: resumes there, nothing read twice', async () => {
    const { path: link, sink } = fx;
    const a = writerFor(1);
    const b = writerFor(2);
    pointAt(link, target(1));
    const follower = await fx.follow();
    write(a, 10);
    await follower.pollOnce();
    pointAt(link, target(2));
    write(b, 10);
    await follower.pollOnce();
    await follower.pollOnce(); // target 1 is let go of
    pointAt(link, target(1));
    write(a, 10);
    await follower.pollOnce();
    pointAt(link, target(2));
    write(b, 10);
    await follower.pollOnce();
    await follower.pollOnce();
    sink.expectExactlyOnce(40);
    expect(sink.rotations.map((r) => r.kind)).toEqual(['symlink', 'symlink', 'symlink']);
  });

  it('switched and switched back within one poll: the old target is simply read on', async () => {
    const { path: link, sink } = fx;
    const a = writerFor(1);
    writerFor(2); // target 2 exists, and is never written: the link points at it only between two polls
    pointAt(link, target(1));
    const follower = await fx.follow();
    write(a, 10);
    await follower.pollOnce();
    pointAt(link, target(2));
    pointAt(link, target(1));
    write(a, 10);
    await follower.pollOnce();
    sink.expectExactlyOnce(20);
    expect(sink.rotations).toEqual([]);
  });

  it('the link dangles for a while (target not created yet): reported once, then followed', async () => {
    const { path: link, sink } = fx;
    const a = writerFor(1);
    pointAt(link, target(1));
    const follower = await fx.follow();
    write(a, 10);
    await follower.pollOnce();
    pointAt(link, target(2)); // does not exist yet
    write(a, 5);
    await follower.pollOnce(); // the old target is still drained: not a problem yet
    expect(sink.errors).toEqual([]);
    const b = writerFor(2);
    write(b, 10);
    await follower.pollOnce();
    await follower.pollOnce();
    sink.expectExactlyOnce(25);
  });
});

describe('symlink switch, several targets within one poll', () => {
  const fx = followerFixture({ prefix: 'zpe-symlink-', name: 'app-current.log', pattern: (d) => join(d, 'app-*.log'), writer: false });

  it('a pattern that also matches the targets reads every target, the intermediate one included', async () => {
    const { dir, path: link, sink } = fx;
    const ws = [1, 2, 3].map((n) => fx.writer(join(dir, `app-${n}.log`)));
    pointAt(link, join(dir, 'app-1.log'));
    const follower = await fx.follow();
    let next = 1;
    const write = (w: SeqWriter, count: number) => {
      w.next = next;
      next = w.write(count) + 1;
    };
    write(ws[0]!, 10);
    await follower.pollOnce();
    pointAt(link, join(dir, 'app-2.log'));
    write(ws[1]!, 10);
    pointAt(link, join(dir, 'app-3.log'));
    write(ws[2]!, 10);
    await follower.pollOnce();
    sink.expectExactlyOnce(30);
  });
});
