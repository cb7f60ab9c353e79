// Rename rotation (logrotate `create`): the file is renamed away, the writer keeps writing to it until it
// reopens, a new file appears at the path. Every sequence number must arrive exactly once, whether the
// pattern is the literal path, a glob that also matches the rotated names, or a glob they leave.
import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { followerFixture, rotateWhileWriting } from '../../helpers/follower-fixture.js';
import { fdsInto, sleep, waitFor } from '../../helpers/sequence-log.js';

/** logrotate's numbered shift: NAME.k → NAME.k+1 (oldest first), then NAME → NAME.1. */
function rotate(path: string): void {
  let k = 1;
  while (existsSync(`${path}.${k}`)) k++;
  for (; k > 1; k--) renameSync(`${path}.${k - 1}`, `${path}.${k}`);
  renameSync(path, `${path}.1`);
}

const PATTERNS = {
  literal: (dir: string) => join(dir, 'app.log'),
  'glob matching the rotated names': (dir: string) => join(dir, 'app.log*'),
  'glob the rotated names leave': (dir: string) => join(dir, '*.log'),
} as const;

describe.each(Object.entries(PATTERNS))('rename rotation, pattern: %s', (_name, patternFor) => {
  const fx = followerFixture({ prefix: 'zpe-rename-', pattern: patternFor, started: true, checkFds: true });

  it('drains what the writer appends to the renamed file before it reopens', async () => {
    const { path, sink, w, follower } = fx;
    w.write(100);
    await follower.pollOnce();
    rotate(path);
    w.write(50); // still the old descriptor
    await follower.pollOnce(); // path missing: the renamed file is drained, nothing reported
    w.write(10);
    w.reopen();
    w.write(40);
    await follower.pollOnce();
    w.write(10);
    await follower.pollOnce();
    sink.expectExactlyOnce(210);
    expect(sink.errors).toEqual([]);
  });

  it('rename, late writes and reopen with no poll in between', async () => {
    const { path, sink, w, follower } = fx;
    w.write(10);
    await follower.pollOnce();
    w.write(10);
    rotate(path);
    const old = w.reopen();
    w.write(5, old); // a late flush to the rotated file, after the new one exists
    w.write(10);
    await follower.pollOnce();
    w.write(5, old); // and another one a poll later
    await follower.pollOnce();
    await follower.pollOnce();
    sink.expectExactlyOnce(40);
  });

  it('two rotations inside one poll: the generation never seen at the path is read from its sibling', async () => {
    const { path, sink, w, follower } = fx;
    w.write(10);
    await follower.pollOnce();
    w.write(10);
    rotate(path);
    w.reopen();
    w.write(20); // generation 2, at the path only between polls
    rotate(path);
    w.reopen();
    w.write(5);
    await follower.pollOnce();
    await follower.pollOnce();
    sink.expectExactlyOnce(45);
    expect(existsSync(`${path}.2`)).toBe(true);
  });

  it('three rotations inside one poll, every generation still written late', async () => {
    const { path, sink, w, follower } = fx;
    w.write(10);
    await follower.pollOnce();
    rotate(path);
    const g1 = w.reopen();
    w.write(10);
    rotate(path);
    const g2 = w.reopen();
    w.write(10);
    w.write(3, g1);
    rotate(path);
    const g3 = w.reopen();
    w.write(3, g2);
    w.write(3, g3);
    w.write(10);
    await follower.pollOnce();
    await follower.pollOnce();
    sink.expectExactlyOnce(49);
  });

  it('a line cut in half by the rename is completed on the old file', async () => {
    const { path, sink, w, follower } = fx;
    w.write(5);
    const half = w.startLine();
    await follower.pollOnce();
    rotate(path);
    const old = w.reopen();
    half.finish(old);
    w.write(5);
    await follower.pollOnce();
    await follower.pollOnce();
    sink.expectExactlyOnce(11);
    expect(sink.partials).toEqual([]);
  });

  it('many rotations, each seen by a poll, keep nothing open but the current file', async () => {
    const { dir, path, sink, w, follower } = fx;
    for (let i = 0; i < 12; i++) {
      w.write(7);
      await follower.pollOnce();
      rotate(path);
      const old = w.reopen();
      w.write(2, old);
      await follower.pollOnce();
    }
    w.write(3);
    await follower.pollOnce();
    await follower.pollOnce();
    sink.expectExactlyOnce(12 * 9 + 3);
    // Retired generations are closed; a glob matching them follows them on (still open, read once).
    const open = fdsInto(dir).length - (1 + 12); // minus the writer's own descriptors
    expect(open).toBeLessThanOrEqual(_name === 'glob matching the rotated names' ? 13 : 1);
  });
});

describe('rename rotation, free-running', () => {
  const fx = followerFixture({ prefix: 'zpe-rename-run-', writer: false });

  it.each([['literal'], ['glob']] as const)('a child process appending steadily, rotated every ~30 ms and signalled to reopen (%s pattern)', async (kind) => {
    const { path, sink } = fx;
    const { follower, last, rotations } = await rotateWhileWriting(
      fx,
      kind,
      (k) => 20 + (k % 3) * 10,
      (writer) => {
        if (!existsSync(path)) return false; // the writer has not reopened since the last rotation
        rotate(path);
        writer.hup();
        return true;
      },
    );
    await waitFor(() => sink.distinct >= last, 5000).catch(() => undefined); // the audit below says what is missing
    await sleep(30); // a few more polls: nothing may arrive twice late
    await follower.pollOnce();
    expect(last).toBeGreaterThan(1000);
    expect(rotations).toBeGreaterThan(20);
    sink.expectExactlyOnce(last);
  });
});
