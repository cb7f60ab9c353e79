// Named regression cases for what the starvation harness (and loaded CI runs) found, each replayed exactly
// through the follower's fs seam (StarvedFs): the rotation, stall or inode reuse lands at the one step
// where it did harm, so the case fails the same way on an idle or a starved machine.
import { copyFileSync, existsSync, readFileSync, readdirSync, renameSync, statSync, truncateSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { followerFixture } from '../../helpers/follower-fixture.js';
import { StarvedFs } from '../../helpers/starved-fs.js';

/** logrotate's numbered shift: NAME.k → NAME.k+1 (oldest first), then NAME → NAME.1. */
function rotate(path: string): void {
  let k = 1;
  while (existsSync(`${path}.${k}`)) k++;
  for (; k > 1; k--) renameSync(`${path}.${k - 1}`, `${path}.${k}`);
  renameSync(path, `${path}.1`);
}

describe('the loaded CI loss: lines 2535–2678 missing, numbered shift every ~25 ms, no generation deleted', () => {
  const fx = followerFixture({ prefix: 'zpe-regress-family-', checkFds: true });

  it('the file just opened is rotated away before its family is resolved, and its writer has not reopened: the generations between are still read', async () => {
    // The poll opened the file at the path (C); two generations back it had read A, and B was at the path
    // only between the polls. Before C's directory and name were resolved (realpath of the path), C was
    // rotated too and the writer, starved, had not created the path again: realpath failed, C was followed
    // with no family, and the generations between A and C (B) were never looked for. Nothing counted them.
    const { path, sink, w } = fx;
    const fs = new StarvedFs();
    const follower = await fx.follow({ fs });
    w.write(5);
    await follower.pollOnce(); // A read
    rotate(path);
    w.reopen();
    w.write(7); // B: at the path only between two polls
    rotate(path);
    w.reopen();
    w.write(7); // C
    // B was last written well before this poll (a starved follower polls late): its mtime is no evidence.
    const past = new Date(Date.now() - 10_000);
    utimesSync(`${path}.1`, past, past);
    let hit = 0;
    fs.before = ({ op, path: at }) => {
      if (op === 'realpath' && at === path && hit === 0) {
        hit++;
        rotate(path); // C → .1, and nothing at the path until the writer reopens
        w.write(3); // still to C
      }
    };
    await follower.pollOnce();
    fs.before = () => undefined;
    expect(hit).toBe(1);
    w.reopen();
    w.write(4);
    await follower.pollOnce();
    await follower.pollOnce();
    await follower.pollOnce();
    sink.expectExactlyOnce(5 + 7 + 7 + 3 + 4);
    expect(sink.rotations.filter((r) => r.kind === 'unrecovered')).toEqual([]);
  });
});

/** The renames of logrotate's numbered shift, oldest first (NAME.k → NAME.k+1, …, NAME → NAME.1), to run one at a time. */
function shiftSteps(path: string): Array<() => void> {
  let k = 1;
  while (existsSync(`${path}.${k}`)) k++;
  const steps: Array<() => void> = [];
  for (; k > 1; k--) {
    const [from, to] = [`${path}.${k - 1}`, `${path}.${k}`];
    steps.push(() => renameSync(from, to));
  }
  steps.push(() => renameSync(path, `${path}.1`));
  return steps;
}

/** The highest k with NAME.k in the directory now. */
function highestNow(dir: string): number {
  return Math.max(
    0,
    ...readdirSync(dir)
      .map((n) => /^app\.log\.(\d+)$/.exec(n)?.[1])
      .filter((k) => k !== undefined)
      .map(Number),
  );
}

describe('the loaded CI loss, again: the family walk stopped at a hole a shift left past the names listed (lines 2107–2170 missing in a loop beside 3 busy processes)', () => {
  const fx = followerFixture({ prefix: 'zpe-regress-hole-', checkFds: true });

  it('each walk meets a shift begun past its listing, the oldest moved up and the next not yet: the generations between are read all the same', async () => {
    // A poll found a new file at the path (D) and walked the family for the generations between it and the
    // file read before (A, now app.log.3). Rotations every ~25 ms against a walk that takes longer on a
    // starved machine: the listing the walk starts from is stale before its first stat (one more rotation,
    // A now app.log.4), and as the walk looks past the highest name listed, a shift is running: A has moved
    // on to app.log.5, app.log.3 not yet into app.log.4. The walk took the empty name for the end, never saw
    // A, and without A no generation can be told: B and C were never read, and nothing counted them. The
    // walk is checked against a fresh listing and done again, four times at most, and every attempt met the
    // same (as every walk does under rotations faster than it). The next poll's walk starts from D, and B
    // and C, last written long before, are no generations of it.
    const { dir, path, sink, w } = fx;
    const fs = new StarvedFs();
    const follower = await fx.follow({ fs });
    w.write(5);
    await follower.pollOnce(); // A read
    const rotateAndWrite = () => {
      for (const step of shiftSteps(path)) step();
      w.reopen();
      w.write(7);
    };
    rotateAndWrite(); // B
    rotateAndWrite(); // C
    rotateAndWrite(); // D at the path, A is app.log.3
    const past = new Date(Date.now() - 10_000);
    for (const k of [1, 2]) utimesSync(`${path}.${k}`, past, past); // C and B: written long before the poll
    let pending: Array<() => void> = [];
    let listedTop = Number.POSITIVE_INFINITY;
    let firstStat = false;
    let holes = 0;
    fs.before = ({ op, path: at }) => {
      for (const step of pending.splice(0)) step(); // the shift left half-done at the call before, finished
      if (holes >= 4) return;
      if (op === 'readdir') {
        listedTop = highestNow(dir);
        firstStat = true;
        return;
      }
      if (op !== 'stat') return;
      const k = Number(/\.(\d+)$/.exec(at)?.[1]);
      if (firstStat && k === 1) rotateAndWrite(); // the listing is stale from here
      firstStat = false;
      if (k > listedTop && existsSync(at) && !existsSync(`${path}.${k + 1}`)) {
        // A shift begins: the oldest moves up, the rest of it (and the writer's reopen) at the next call.
        const steps = shiftSteps(path);
        steps.shift()?.();
        pending = [...steps, () => w.reopen(), () => void w.write(7)];
        holes++;
      }
    };
    await follower.pollOnce();
    for (const step of pending.splice(0)) step();
    fs.before = () => undefined;
    expect(holes).toBe(4);
    w.write(3);
    await follower.pollOnce();
    await follower.pollOnce();
    await follower.pollOnce();
    sink.expectExactlyOnce(w.last);
  });
});

describe('the end of the free-running run: the last rotation, and the writer never reopened (load ~25: the last files missing; a traced loop: lines 2119–2122)', () => {
  const fx = followerFixture({ prefix: 'zpe-regress-missing-', checkFds: true });

  it('nothing at the path after the last rotations: the generations since the file read there are read all the same', async () => {
    // The test's last rotation signalled the writer, which was stopped before it reopened: nothing was at the
    // path again. The file the follower had read there (A) was drained, but the generations rotated away
    // after it (B, and C, which the writer went on writing after its rotation) were looked for only when a
    // new file appeared at the path: never.
    const { path, sink, w } = fx;
    const follower = await fx.follow();
    w.write(5);
    await follower.pollOnce(); // A read
    rotate(path);
    w.reopen();
    w.write(7); // B
    rotate(path);
    w.reopen();
    w.write(6); // C
    rotate(path); // and the writer does not reopen
    w.write(3); // to C, now app.log.1
    await follower.pollOnce();
    await follower.pollOnce();
    sink.expectExactlyOnce(5 + 7 + 6 + 3);
    expect(sink.rotations.filter((r) => r.kind === 'unrecovered')).toEqual([]);
  });
});

/** logrotate's compress (no delaycompress): NAME.1 → NAME.1.gz, a new file, and NAME.1 removed. */
function compress(one: string): void {
  writeFileSync(`${one}.gz`, gzipSync(readFileSync(one)));
  unlinkSync(one);
}

/** The shift with compressed generations: NAME.k.gz → NAME.(k+1).gz, then NAME → NAME.1. */
function rotateCompressed(path: string): void {
  let k = 1;
  while (existsSync(`${path}.${k}.gz`)) k++;
  for (; k > 1; k--) renameSync(`${path}.${k - 1}.gz`, `${path}.${k}.gz`);
  renameSync(path, `${path}.1`);
}

describe('gzip bytes read as a line (seen once at load 18: "compress, seed 3, stepwise false")', () => {
  const fx = followerFixture({ prefix: 'zpe-regress-gzip-', checkFds: true });

  it('a compressed generation given the inode of an empty file read and let go of is not taken for that file grown', async () => {
    // B was rotated away empty (the writer reopened and wrote nothing before the next rotation), drained
    // and let go of, and remembered as read to offset 0 with an empty fingerprint. Compressing it freed its
    // inode, and the file system gave that inode to the next .gz. The remembered empty fingerprint is a
    // prefix of anything, so the .gz passed as B grown since, and was read from 0 as lines. Which inode a
    // new file gets depends on what else the machine creates meanwhile: hence once, under load.
    const { path, sink, w } = fx;
    const fs = new StarvedFs();
    const follower = await fx.follow({ fs });
    w.write(5); // A
    await follower.pollOnce();
    rotateCompressed(path);
    w.reopen(); // B, left empty
    compress(`${path}.1`); // A compressed under the follower's descriptor: drained through it
    await follower.pollOnce();
    await follower.pollOnce();
    const b = statSync(path);
    rotateCompressed(path);
    w.reopen(); // C
    w.write(6);
    await follower.pollOnce();
    await follower.pollOnce(); // B let go of, remembered empty
    compress(`${path}.1`); // B gone: its inode is free
    rotateCompressed(path);
    w.reopen(); // D
    w.write(4);
    compress(`${path}.1`); // C compressed (it was held open: drained); its .gz gets B's old inode
    fs.reuseInode(`${path}.1.gz`, b);
    await follower.pollOnce();
    await follower.pollOnce();
    await follower.pollOnce();
    expect(sink.garbled).toEqual([]);
    sink.expectExactlyOnce(5 + 6 + 4);
  });
  it('the file seen at the path is rotated and compressed before the open, and a .gz gets its inode: the .gz is not followed as it', async () => {
    // What "compress, seed 15, stepwise false" does on ext4: the poll's stat saw X at the path; before the
    // open, X was rotated, compressed (X removed) and the next .gz was given X's inode. The open found the
    // new file at the path, and the follower looked beside it for X by identity: it found the .gz and read
    // it from its start as X.
    const { path, sink, w } = fx;
    const fs = new StarvedFs();
    const follower = await fx.follow({ fs });
    w.write(5); // A
    await follower.pollOnce();
    rotateCompressed(path);
    w.reopen();
    w.write(6); // X: seen by the next poll's stat, never opened
    const x = statSync(path);
    let hit = 0;
    fs.before = ({ op, path: at }) => {
      if (op === 'open' && at === path && hit === 0) {
        hit++;
        compress(`${path}.1`); // A, drained through its descriptor already
        rotateCompressed(path);
        w.reopen();
        w.write(4); // Y
        compress(`${path}.1`); // X gone before any read: its 6 lines are lost
        fs.reuseInode(`${path}.1.gz`, x);
      }
    };
    await follower.pollOnce();
    fs.before = () => undefined;
    expect(hit).toBe(1);
    await follower.pollOnce();
    await follower.pollOnce();
    expect(sink.garbled).toEqual([]);
    expect(sink.audit(w.last)).toEqual({ missing: [6, 7, 8, 9, 10, 11], duplicated: [] });
    // X's loss is counted: the bytes its stat showed, and the lines they held by the source's line length.
    expect(sink.unrecoveredBytes).toBe(x.size);
    expect(sink.lostLines).toEqual([{ path, lines: 6 }]);
  });
});

describe('compress at once (no delaycompress), several rotations per poll: what was never read is counted', () => {
  const fx = followerFixture({ prefix: 'zpe-regress-counted-', checkFds: true });

  it('a generation compressed before any read is counted unrecovered with its lines estimated; the .gz of a file read is not', async () => {
    const { path, sink, w } = fx;
    const follower = await fx.follow();
    w.write(5); // A
    await follower.pollOnce();
    rotateCompressed(path);
    w.reopen(); // B
    compress(`${path}.1`); // A: read, held, drained through its descriptor; its .gz holds nothing new
    w.write(6);
    const bBytes = statSync(path).size;
    rotateCompressed(path);
    w.reopen(); // C
    compress(`${path}.1`); // B: never seen by a poll
    w.write(4);
    for (let i = 0; i < 3; i++) await follower.pollOnce();
    expect(sink.audit(w.last)).toEqual({ missing: [6, 7, 8, 9, 10, 11], duplicated: [] });
    expect(sink.rotations.filter((r) => r.kind === 'unrecovered')).toHaveLength(1);
    expect(sink.unrecoveredBytes).toBe(bBytes); // the uncompressed size, from the gzip trailer
    expect(sink.lostLines).toEqual([{ path: `${path}.1.gz`, lines: 6 }]);
    // Looked at again by the next rotation, it is not counted twice.
    rotateCompressed(path);
    w.reopen();
    compress(`${path}.1`);
    w.write(2);
    for (let i = 0; i < 2; i++) await follower.pollOnce();
    expect(sink.rotations.filter((r) => r.kind === 'unrecovered')).toHaveLength(1);
    expect(sink.audit(w.last).missing).toEqual([6, 7, 8, 9, 10, 11]);
  });
});

describe('a deleted file whose writer is starved (the hypothesis of the last session, for the delete scheme)', () => {
  const fx = followerFixture({ prefix: 'zpe-regress-deleted-', checkFds: true });

  it('deleted, nothing at the path for many polls, then written again through the old descriptor: every line, read through the follower’s descriptor', async () => {
    // The writer deleted its own file and, starved, neither recreated the path nor wrote for several polls;
    // then it wrote its last lines to the deleted file and only then created the path again. A deleted file
    // with nothing at its path was let go of after two polls that found nothing new, and those last lines,
    // in a file the follower had held open, were lost.
    const { path, sink, w } = fx;
    const follower = await fx.follow();
    w.write(5);
    await follower.pollOnce();
    unlinkSync(path);
    w.write(2); // to the deleted file
    for (let i = 0; i < 12; i++) await follower.pollOnce(); // the writer stalls: polls find nothing new
    w.write(3); // still to the deleted file, many polls later
    await follower.pollOnce();
    w.reopen(); // the path again
    w.write(4);
    for (let i = 0; i < 3; i++) await follower.pollOnce();
    sink.expectExactlyOnce(5 + 2 + 3 + 4);
  });

  it('once the path names a new file again, the deleted one is let go of at the next poll that finds nothing in it', async () => {
    const { path, sink, w } = fx;
    const fs = new StarvedFs();
    const follower = await fx.follow({ fs });
    w.write(5);
    await follower.pollOnce();
    const deleted = statSync(path);
    unlinkSync(path);
    w.write(2);
    await follower.pollOnce();
    await follower.pollOnce();
    expect(fs.holds(`${deleted.dev}:${deleted.ino}`)).toBe(true); // held: its writer may still append
    w.reopen();
    w.write(4);
    await follower.pollOnce();
    await follower.pollOnce();
    expect(fs.holds(`${deleted.dev}:${deleted.ino}`)).toBe(false);
    sink.expectExactlyOnce(5 + 2 + 4);
  });
});

/** logrotate's copytruncate, its two halves apart: the shift and the copy of NAME to NAME.1, then the truncation (the writer appends, so it writes at 0 next). */
function copyOnly(path: string): void {
  let k = 1;
  while (existsSync(`${path}.${k}`)) k++;
  for (; k > 1; k--) renameSync(`${path}.${k - 1}`, `${path}.${k}`);
  copyFileSync(path, `${path}.1`);
}
function copytruncate(path: string): void {
  copyOnly(path);
  truncateSync(path, 0);
}

describe('several copytruncates within one poll (the harness: "copytruncate, seed 30 / seed 3 / seed 12, stepwise false", "seed 21, stepwise true")', () => {
  const fx = followerFixture({ prefix: 'zpe-regress-copytrunc-', checkFds: true });

  it('truncated between the probe’s stat and its head read: the empty head is not taken for an append, nor a later copy’s chunk for the old content', async () => {
    // Seed 30 lost 10 lines of a copy and read 24 twice. B's start was known (the probe of a truncation),
    // none of it read. B was copied and truncated and C written before the chunk read, so the chunk was C;
    // then C was copied and truncated between the probe's fstat (C's size) and its head read (nothing). An
    // empty head is a prefix of anything and the size had grown: C was taken as B's continuation, B's copy
    // (shorter than the offset so reached) was never read, and C's copy was read again as a generation.
    const { path, sink, w } = fx;
    const fs = new StarvedFs();
    const follower = await fx.follow({ fs });
    w.write(5); // A
    await follower.pollOnce();
    copytruncate(path);
    w.write(3); // B: its start seen by the next probe, none of it read
    let stage = 0;
    fs.before = ({ op, path: at }) => {
      if (op === 'readdir' && stage === 0)
        stage = 1; // the truncation's look at the siblings
      else if (at !== path) return;
      else if (op === 'read' && stage === 1) {
        stage = 2;
        copytruncate(path);
        w.write(6); // C, longer than B: the chunk read next
      } else if (op === 'fstat' && stage === 2) stage = 3;
      else if (op === 'read' && stage === 3) {
        stage = 4;
        copytruncate(path); // between the probe's stat and its head read
      }
    };
    await follower.pollOnce();
    fs.before = () => undefined;
    expect(stage).toBe(4);
    w.write(2);
    for (let i = 0; i < 3; i++) await follower.pollOnce();
    sink.expectExactlyOnce(5 + 3 + 6 + 2);
  });

  it('a file read from empty and truncated after the read: what was read is its fingerprint, so its copy is not read again', async () => {
    // Seeds 3 and 12 read 55 and 36 lines twice. Left empty by a copytruncate, the file had no fingerprint;
    // B was written and read from 0, then copied and truncated before the probe after the read. The probe
    // (size 0, empty head) showed nothing changed: B was taken, the fingerprint stayed empty, and when C
    // refilled the file, B's copy (newer than A's, starting like neither) was read again as a generation.
    const { path, sink, w } = fx;
    const fs = new StarvedFs();
    const follower = await fx.follow({ fs });
    w.write(5); // A
    await follower.pollOnce();
    copytruncate(path); // left empty: seen by the next probe
    let stage = 0;
    fs.before = ({ op, path: at }) => {
      if (op === 'readdir' && stage === 0) stage = 1;
      else if (at !== path) return;
      else if (op === 'read' && stage === 1) {
        stage = 2;
        w.write(6); // B, read from 0 next
      } else if (op === 'fstat' && stage === 2) {
        stage = 3;
        copytruncate(path); // after the read, before its probe
      }
    };
    await follower.pollOnce();
    fs.before = () => undefined;
    expect(stage).toBe(3);
    w.write(8); // C, longer than B: the file refilled
    for (let i = 0; i < 3; i++) await follower.pollOnce();
    sink.expectExactlyOnce(5 + 6 + 8);
    expect(sink.rotations.filter((r) => r.kind === 'unrecovered')).toEqual([]);
  });

  it('a copy made during the walk of the siblings, its truncation still to come, is the content the file is read for, not a generation', async () => {
    // Seed 21 stepwise read 56 lines twice. The probe saw B in a file a truncation had left empty; while
    // the siblings were walked, B was copied and truncated, C written and copied, C's truncation not done
    // yet. C's copy started like neither A's nor B's content: read as a generation, then C read again
    // from the file itself. Only the file's start after the walk tells C's copy for what it is.
    const { path, sink, w } = fx;
    const fs = new StarvedFs();
    const follower = await fx.follow({ fs });
    w.write(5); // A
    await follower.pollOnce();
    copytruncate(path);
    await follower.pollOnce(); // left empty
    w.write(4); // B
    let hit = 0;
    fs.before = ({ op }) => {
      if (op !== 'readdir' || hit > 0) return;
      hit++;
      copytruncate(path);
      w.write(7); // C
      copyOnly(path); // C's copy; its truncation comes later
    };
    await follower.pollOnce();
    fs.before = () => undefined;
    expect(hit).toBe(1);
    truncateSync(path, 0);
    w.write(3); // D
    for (let i = 0; i < 3; i++) await follower.pollOnce();
    sink.expectExactlyOnce(5 + 4 + 7 + 3);
    expect(sink.rotations.filter((r) => r.kind === 'unrecovered')).toEqual([]);
  });
});
