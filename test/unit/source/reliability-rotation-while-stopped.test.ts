// Rotation while the exporter is stopped: the follower resumes from a checkpoint (its positions, and the
// counts of that moment) after the log was renamed, rotated twice, copy-truncated, truncated, deleted or
// cut mid-line while nothing was watching. A "crash" restarts from a checkpoint taken earlier, so the
// lines read after it must be read again; a clean stop restarts from the positions it closed at.
// Every sequence number must be counted exactly once across the restart.
import { copyFileSync, existsSync, renameSync, statSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileFollower, type FollowerState, type FollowOptions } from '../../../src/source/file-follower.js';
import { SeqSink, SeqWriter, seqBlock, fdsInto } from '../../helpers/sequence-log.js';

interface Saved {
  state: FollowerState;
  /** What the sink had counted at that moment: the counters a checkpoint restores. */
  counts: Map<number, number>;
  savedAtMs: number;
}

type Extra = Partial<Omit<FollowOptions, 'patterns' | 'resume'>> & { cap?: number };

async function follow(patterns: string[], sink: SeqSink, resume?: Saved, extra: Extra = {}): Promise<FileFollower> {
  const { cap, ...opts } = extra;
  const f = new FileFollower(
    {
      patterns,
      maxLineBytes: 4096,
      pollIntervalMs: 60_000,
      startAt: 'start',
      ...opts,
      ...(resume === undefined ? {} : { resume: { state: resume.state, savedAtMs: resume.savedAtMs, maxCatchUpBytes: cap ?? Number.POSITIVE_INFINITY } }),
    },
    sink,
    sink,
  );
  await f.start();
  return f;
}

/** A checkpoint now (at rest), deep-copied as a written one would be. */
function save(follower: FileFollower, sink: SeqSink): Promise<Saved> {
  return follower.snapshot((state) => ({
    state: {
      patterns: [...state.patterns],
      files: state.files.map((f) => ({ ...f, head: Buffer.from(f.head), family: f.family && { ...f.family } })),
      known: state.known.map((k) => ({ ...k, head: Buffer.from(k.head) })),
    },
    counts: new Map(sink.counts),
    savedAtMs: Date.now(),
  }));
}

/** The sink of the next run: counting on from the checkpoint's counts. */
function restored(saved: Saved): SeqSink {
  const sink = new SeqSink();
  for (const [n, c] of saved.counts) sink.counts.set(n, c);
  return sink;
}

/** logrotate's numbered shift: NAME.k → NAME.k+1 (oldest first), then NAME → NAME.1. */
function shift(path: string): void {
  let k = 1;
  while (existsSync(`${path}.${k}`)) k++;
  for (; k > 1; k--) renameSync(`${path}.${k - 1}`, `${path}.${k}`);
}

function renameRotate(path: string): void {
  shift(path);
  renameSync(path, `${path}.1`);
}

function copyTruncate(path: string): void {
  shift(path);
  copyFileSync(path, `${path}.1`);
  truncateSync(path, 0);
}

describe('rotation while stopped: resuming from a checkpoint', () => {
  let dir: string;
  let path: string;
  let w: SeqWriter;
  let followers: FileFollower[];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'zpe-stopped-'));
    path = join(dir, 'app.log');
    w = new SeqWriter(path);
    followers = [];
  });
  afterEach(async () => {
    for (const f of followers) await f.stop();
    w.close();
    expect(fdsInto(dir)).toEqual([]);
    await rm(dir, { recursive: true, force: true });
  });

  async function run(sink: SeqSink, resume?: Saved, extra?: Extra, patterns = [path]): Promise<FileFollower> {
    const f = await follow(patterns, sink, resume, extra);
    followers.push(f);
    return f;
  }

  /** kill -9: the run ends, and whatever it read after the checkpoint is forgotten. */
  async function crash(f: FileFollower): Promise<void> {
    await f.stop();
  }

  /** SIGTERM: the run ends and its final positions, with its counts, are the checkpoint. */
  async function sigterm(f: FileFollower, sink: SeqSink): Promise<Saved> {
    await f.stop();
    return save(f, sink);
  }

  it('renamed while stopped, after lines read past the checkpoint: the renamed file drained from the offset, then the new one', async () => {
    const a = new SeqSink();
    w.write(100);
    const f = await run(a);
    const saved = await save(f, a);
    w.write(20);
    await f.pollOnce(); // read by the run that crashes, not in the checkpoint
    await crash(f);
    renameRotate(path);
    w.write(10); // late writes into the renamed file
    w.reopen();
    w.write(30);

    const b = restored(saved);
    const g = await run(b, saved);
    await g.pollOnce();
    b.expectExactlyOnce(160);
    expect(b.resumes).toEqual([{ path: `${path}.1`, outcome: 'moved', offset: saved.state.files[0]?.offset }]);
    expect(b.rotations).toEqual([{ path, kind: 'rename' }]);
    expect(b.errors).toEqual([]);
  });

  it('rotated twice while stopped: the generation in between is read as well, oldest first', async () => {
    const a = new SeqSink();
    w.write(50);
    const f = await run(a);
    const saved = await save(f, a);
    w.write(10);
    await crash(f);
    renameRotate(path);
    w.reopen();
    w.write(20); // generation 2, never seen at the path
    renameRotate(path);
    w.reopen();
    w.write(5);

    const b = restored(saved);
    const g = await run(b, saved);
    await g.pollOnce();
    b.expectExactlyOnce(85);
    // Lines of one file arrive in order, files oldest first.
    expect(b.order).toEqual([...Array(35).keys()].map((i) => 51 + i));
  });

  it('copytruncate while stopped: what the copy holds past the offset is read, then the file from its start', async () => {
    const a = new SeqSink();
    w.write(100);
    const f = await run(a);
    const saved = await save(f, a);
    w.write(20);
    await f.pollOnce();
    await crash(f);
    copyTruncate(path);
    w.write(30); // O_APPEND: at the new end of the truncated file

    const b = restored(saved);
    const g = await run(b, saved);
    await g.pollOnce();
    b.expectExactlyOnce(150);
    expect(b.rotations).toEqual([{ path, kind: 'copytruncate-recovered' }]);
    expect(b.skips).toEqual([]);
  });

  it('truncated while stopped, no copy: read again from its start, reported as a truncate', async () => {
    const a = new SeqSink();
    w.write(100);
    const f = await run(a);
    const saved = await sigterm(f, a);
    truncateSync(path, 0);
    w.write(30);

    const b = restored(saved);
    const g = await run(b, saved);
    await g.pollOnce();
    b.expectExactlyOnce(130);
    expect(b.rotations).toEqual([{ path, kind: 'truncate' }]);
    expect(b.skips).toEqual([]); // everything written before the truncate had been read
  });

  it('deleted and recreated while stopped: reported gone, the new file read from its start', async () => {
    const a = new SeqSink();
    w.write(40);
    const f = await run(a);
    const saved = await sigterm(f, a);
    unlinkSync(path);
    w.reopen();
    w.write(15);

    const b = restored(saved);
    const g = await run(b, saved);
    await g.pollOnce();
    b.expectExactlyOnce(55);
    expect(b.resumes.map((r) => r.outcome)).toEqual(['gone']);
  });

  it('a line half-written at the checkpoint is read whole after the restart', async () => {
    const a = new SeqSink();
    w.write(10);
    const half = w.startLine();
    const f = await run(a);
    const saved = await sigterm(f, a);
    half.finish();
    w.write(5);

    const b = restored(saved);
    const g = await run(b, saved);
    await g.pollOnce();
    b.expectExactlyOnce(16);
    expect(b.partials).toEqual([]);
  });

  it('inside an oversize line at the checkpoint: the rest of it is dropped, and not reported again', async () => {
    const a = new SeqSink();
    w.write(5);
    w.raw('x'.repeat(5_000)); // longer than maxLineBytes, not finished yet
    const f = await run(a);
    expect(a.oversizes).toBe(1);
    const saved = await sigterm(f, a);
    expect(saved.state.files[0]?.skipToNewline).toBe(true);
    w.raw(`${'x'.repeat(100)}\n`);
    w.write(5);

    const b = restored(saved);
    const g = await run(b, saved);
    await g.pollOnce();
    b.expectExactlyOnce(10);
    expect(b.oversizes).toBe(0);
  });

  it("a glob's files that appeared while stopped are read from their start even with start-at=end; a pattern new to the config is not", async () => {
    const glob = join(dir, '*.log');
    const a = new SeqSink();
    const f = await run(a, undefined, { startAt: 'end' }, [glob]);
    w.write(10);
    await f.pollOnce();
    const saved = await sigterm(f, a);
    w.write(5);
    writeFileSync(join(dir, 'b.log'), seqBlock(16, 20));
    writeFileSync(join(dir, 'other.txt'), seqBlock(1000, 1004)); // a new pattern's existing lines: start-at=end

    const b = restored(saved);
    const g = await run(b, saved, { startAt: 'end' }, [glob, join(dir, 'other.txt')]);
    await g.pollOnce();
    b.expectExactlyOnce(20);
  });

  it('the catch-up cap: a file resumed, and one that appeared while stopped, are read only that far from their end', async () => {
    const glob = join(dir, '*.log');
    const a = new SeqSink();
    w.write(10);
    const f = await run(a, undefined, {}, [glob]);
    const saved = await sigterm(f, a);
    w.write(200); // lines 11..210
    writeFileSync(join(dir, 'b.log'), seqBlock(1001, 1200));
    const cap = 40 * Buffer.byteLength(seqBlock(100, 100)); // room for about 40 lines

    const b = restored(saved);
    const g = await run(b, saved, { cap }, [glob]);
    await g.pollOnce();
    const delivered = [...b.counts.keys()].filter((n) => n > 10);
    const fromA = delivered.filter((n) => n <= 210);
    const fromB = delivered.filter((n) => n > 1000);
    // Each file: a contiguous run of its last lines, at most `cap` bytes, none repeated; the rest reported.
    expect(fromA.length).toBeGreaterThan(30);
    expect(fromA).toEqual([...Array(fromA.length).keys()].map((i) => 211 - fromA.length + i));
    expect(fromB).toEqual([...Array(fromB.length).keys()].map((i) => 1201 - fromB.length + i));
    expect(Buffer.byteLength(seqBlock(211 - fromA.length, 210))).toBeLessThanOrEqual(cap);
    const skipped = b.skips.filter((s) => s.reason === 'catch_up_cap').reduce((sum, s) => sum + s.bytes, 0);
    expect(skipped).toBe(Buffer.byteLength(seqBlock(11, 210 - fromA.length)) + Buffer.byteLength(seqBlock(1001, 1200 - fromB.length)));
    expect(b.garbled).toEqual([]);
  });

  it.each([
    ['literal', (p: string) => p],
    ['glob matching the rotated names', (p: string) => `${p}*`],
  ])(
    'random writes, rotations, checkpoints and kill -9s: every line exactly once (property, %s pattern)',
    async (_name, patternOf) => {
      type Op = 'write' | 'poll' | 'checkpoint' | 'crash' | 'sigterm' | 'sigterm-mid-poll' | 'rename' | 'copytruncate' | 'half';
      const ops = fc.array(fc.constantFrom<Op>('write', 'write', 'poll', 'poll', 'checkpoint', 'crash', 'sigterm', 'sigterm-mid-poll', 'rename', 'copytruncate', 'half'), {
        minLength: 5,
        maxLength: 25,
      });
      await fc.assert(
        fc.asyncProperty(ops, fc.integer({ min: 1, max: 30 }), async (script, k) => {
          const sub = await mkdtemp(join(dir, 'run-'));
          const p = join(sub, 'app.log');
          const writer = new SeqWriter(p);
          let sink = new SeqSink();
          const patterns = [patternOf(p)];
          let f = await follow(patterns, sink);
          let saved = await save(f, sink);
          let half: { finish(): void } | undefined;
          // Copytruncate of content no one has seen is not detectable (the file's first bytes are its only
          // trace; the documented copytruncate window): only rotate content the running follower and the
          // checkpoint it would restart from have both seen some of.
          let polledContent = false;
          let savedContent = false;
          try {
            for (let op of script) {
              if (op === 'copytruncate' && !(polledContent && savedContent)) op = 'write';
              // A line is finished before anything but a poll or a checkpoint happens: writers append whole lines.
              if (half !== undefined && op !== 'poll' && op !== 'checkpoint') {
                half.finish();
                half = undefined;
              }
              if (op === 'write') writer.write(k);
              else if (op === 'half') half = writer.startLine();
              else if (op === 'poll') {
                await f.pollOnce();
                polledContent ||= statSync(p).size > 0;
              } else if (op === 'checkpoint') {
                saved = await save(f, sink);
                savedContent = polledContent;
              } else if (op === 'rename' || op === 'copytruncate') {
                if (op === 'rename') {
                  renameRotate(p);
                  writer.write(2);
                  writer.reopen();
                } else {
                  copyTruncate(p);
                }
                polledContent = false;
                savedContent = false;
              } else {
                if (op === 'sigterm-mid-poll') {
                  // SIGTERM while a poll is under way: it stops reading, finishes what it started, and the
                  // positions it closed at are the final checkpoint.
                  const polling = f.pollOnce();
                  for (let i = 0; i < k % 7; i++) await new Promise((r) => setImmediate(r));
                  await f.stop();
                  await polling;
                  op = 'sigterm';
                } else {
                  await f.stop();
                }
                if (op === 'sigterm') {
                  saved = await save(f, sink);
                  savedContent = polledContent;
                }
                sink = restored(saved);
                f = await follow(patterns, sink, saved); // its start is a poll
                polledContent = savedContent || statSync(p).size > 0;
              }
            }
            half?.finish();
            await f.pollOnce();
            await f.pollOnce();
            expect(sink.audit(writer.last)).toEqual({ missing: [], duplicated: [] });
            expect(sink.garbled).toEqual([]);
          } finally {
            await f.stop();
            writer.close();
            await rm(sub, { recursive: true, force: true });
          }
        }),
        { numRuns: 50, seed: 4242 },
      );
    },
    60_000,
  );
});
