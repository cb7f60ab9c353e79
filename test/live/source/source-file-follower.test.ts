import { spawnSync } from 'node:child_process';
import { appendFileSync, writeSync } from 'node:fs';
import { mkdir, rename, truncate, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { LineSink, SourceEvents } from '../../../src/source/line-sink.js';
import { requireBinary } from '../../helpers/binaries.js';
import { followerFixture } from '../../helpers/follower-fixture.js';
import { fdsInto, waitFor } from '../../helpers/sequence-log.js';

/** Records everything a follower reports. */
class Recorder implements LineSink, SourceEvents {
  lines: string[] = [];
  sources: string[] = [];
  oversizes = 0;
  errors: Array<{ source: string; reason: string; detail: string }> = [];
  opens: string[] = [];
  rotations: Array<{ path: string; kind: string }> = [];
  line(text: string, source: string): void {
    this.lines.push(text);
    this.sources.push(source);
  }
  oversize(): void {
    this.oversizes++;
  }
  error(source: string, reason: string, detail: string): void {
    this.errors.push({ source, reason, detail });
  }
  opened(_source: string, path: string): void {
    this.opens.push(path);
  }
  rotated(_source: string, path: string, kind: 'rename' | 'truncate'): void {
    this.rotations.push({ path, kind });
  }
}

const seqLines = (from: number, to: number): string[] => Array.from({ length: to - from + 1 }, (_, i) => `{"seq":${from + i}}`);
const block = (from: number, to: number): string => seqLines(from, to).join('\n') + '\n';

describe('FileFollower', () => {
  // Options as FileFollower defaults them (startAt 'end'), but for the patterns.
  const fx = followerFixture({ prefix: 'zpe-follow-', sink: () => new Recorder(), options: {}, writer: false });
  let writers: number[] = [];
  beforeEach(() => {
    writers = [];
  });
  /** A writer keeping its fd across renames, like a logging process; closed after the test. */
  const writer = (path: string): number => {
    const fd = fx.writer(path).current;
    writers.push(fd);
    return fd;
  };

  it('delivers appended lines, with the pattern as source label', async () => {
    const { path, sink: rec } = fx;
    await writeFile(path, block(1, 2));
    const f = await fx.follow({ patterns: [path], startAt: 'start' });
    expect(rec.lines).toEqual(seqLines(1, 2));
    appendFileSync(path, block(3, 5));
    await f.pollOnce();
    expect(rec.lines).toEqual(seqLines(1, 5));
    expect(new Set(rec.sources)).toEqual(new Set([path]));
    expect(rec.opens).toEqual([path]);
  });

  it('polls on its own once started', async () => {
    const { path, sink: rec } = fx;
    await writeFile(path, '');
    await fx.follow({ patterns: [path], pollIntervalMs: 20 });
    appendFileSync(path, block(1, 1));
    await waitFor(() => rec.lines.length === 1, 1000);
    expect(rec.lines).toEqual(seqLines(1, 1));
  });

  it('holds a partial line until its newline arrives', async () => {
    const { path, sink: rec } = fx;
    await writeFile(path, '');
    const f = await fx.follow({ patterns: [path] });
    appendFileSync(path, '{"seq":');
    await f.pollOnce();
    expect(rec.lines).toEqual([]);
    appendFileSync(path, '1}\n{"se');
    await f.pollOnce();
    expect(rec.lines).toEqual(['{"seq":1}']);
  });

  it("startAt 'end' skips existing content but delivers the line in progress whole", async () => {
    const { path, sink: rec } = fx;
    await writeFile(path, block(1, 50) + '{"seq":');
    const f = await fx.follow({ patterns: [path] });
    expect(rec.lines).toEqual([]);
    appendFileSync(path, '51}\n' + block(52, 52));
    await f.pollOnce();
    expect(rec.lines).toEqual(seqLines(51, 52));
  });

  it('picks up a new file matching a glob and reads it from the start', async () => {
    const { dir, sink: rec } = fx;
    const pattern = join(dir, '*.log');
    await writeFile(join(dir, 'a.log'), block(1, 1));
    const f = await fx.follow({ patterns: [pattern] });
    expect(rec.lines).toEqual([]);
    await writeFile(join(dir, 'b.log'), block(2, 3));
    await writeFile(join(dir, 'ignored.txt'), block(99, 99));
    await f.pollOnce();
    expect(rec.lines).toEqual(seqLines(2, 3));
    expect(new Set(rec.sources)).toEqual(new Set([pattern]));
    expect(rec.opens).toEqual([join(dir, 'a.log'), join(dir, 'b.log')]);
  });

  it('rename rotation: loses and repeats nothing written to the old file after the rename', async () => {
    const { dir, path, sink: rec } = fx;
    let fd = writer(path);
    const f = await fx.follow({ patterns: [path] });
    writeSync(fd, block(1, 100));
    await f.pollOnce();
    await rename(path, join(dir, 'app.log.1'));
    writeSync(fd, block(101, 150)); // still writing to the renamed file
    await f.pollOnce(); // path missing: the renamed file is still drained
    writeSync(fd, block(151, 160) + '{"seq":16');
    fd = writer(path); // the writer reopens: a new file at the path
    writeSync(writers[0]!, '1}\n');
    writeSync(fd, block(162, 200));
    await f.pollOnce();
    appendFileSync(path, block(201, 210));
    await f.pollOnce();
    expect(rec.lines).toEqual(seqLines(1, 210));
    expect(rec.rotations).toEqual([{ path, kind: 'rename' }]);
    expect(rec.errors).toEqual([]); // a path missing mid-rotation is not an error
    expect(fdsInto(dir)).toHaveLength(writers.length + 1); // the old file was closed
  });

  it('rename rotation with no poll in between drains the old file before the new one', async () => {
    const { dir, path, sink: rec } = fx;
    const pattern = join(dir, 'app*.log');
    const fd = writer(path);
    const f = await fx.follow({ patterns: [pattern] });
    writeSync(fd, block(1, 10));
    await f.pollOnce();
    writeSync(fd, block(11, 20));
    await rename(path, join(dir, 'app.log.1')); // no longer matches the glob
    writeSync(fd, block(21, 30));
    await writeFile(path, block(31, 40));
    await f.pollOnce();
    expect(rec.lines).toEqual(seqLines(1, 40));
  });

  it('a renamed file still matching the glob is followed on, not read twice', async () => {
    const { dir, path, sink: rec } = fx;
    const pattern = join(dir, 'app.log*');
    const fd = writer(path);
    const f = await fx.follow({ patterns: [pattern] });
    writeSync(fd, block(1, 10));
    await f.pollOnce();
    await rename(path, join(dir, 'app.log.1'));
    writeSync(fd, block(11, 20));
    await writeFile(path, block(21, 30));
    await f.pollOnce();
    expect([...rec.lines].sort()).toEqual(seqLines(1, 30).sort());
  });

  it('copy-less truncation restarts at offset 0', async () => {
    const { path, sink: rec } = fx;
    await writeFile(path, '');
    const f = await fx.follow({ patterns: [path] });
    appendFileSync(path, block(1, 100));
    await f.pollOnce();
    await truncate(path, 0);
    appendFileSync(path, block(101, 105));
    await f.pollOnce();
    expect(rec.lines).toEqual(seqLines(1, 105));
    expect(rec.rotations).toEqual([{ path, kind: 'truncate' }]);
  });

  it('reports a missing file once, then reads it from the start when it appears', async () => {
    const { dir, sink: rec } = fx;
    const path = join(dir, 'late.log');
    // startAt 'end' applies only to files there at startup. No hold of the deleted file for a starved
    // writer (deletedHoldMs, default 30 s: while held it is still followed, so not missing): let go of at
    // the second poll that finds nothing.
    const f = await fx.follow({ patterns: [path], deletedHoldMs: 0 });
    await f.pollOnce();
    await f.pollOnce();
    expect(rec.errors).toHaveLength(1);
    expect(rec.errors[0]).toMatchObject({ source: path, reason: 'not_found' });
    expect(rec.errors[0]!.detail).toContain(path);
    await writeFile(path, block(1, 3));
    await f.pollOnce();
    expect(rec.lines).toEqual(seqLines(1, 3));
    await unlink(path);
    await f.pollOnce();
    await f.pollOnce();
    expect(rec.errors).toHaveLength(2); // missing again: a new state, reported again
    expect(fdsInto(dir)).toEqual([]); // the deleted file was closed
  });

  it('a FIFO or a directory given as a file is a read_error that says what to give instead', async () => {
    const { dir, sink: rec } = fx;
    const fifo = join(dir, 'pipe.fifo');
    expect(spawnSync(requireBinary('mkfifo'), [fifo]).status).toBe(0);
    const sub = join(dir, 'logs');
    await mkdir(sub);
    const f = await fx.follow({ patterns: [fifo, sub] });
    await f.pollOnce();
    expect(rec.errors).toEqual([
      { source: fifo, reason: 'read_error', detail: `${fifo}: not a regular file (a FIFO): serve follows files by position; send a stream to its stdin instead (cmd | zero-plane-exporter serve -)` },
      { source: sub, reason: 'read_error', detail: `${sub}: not a regular file (a directory): give a file, or a glob such as DIR/*.log` },
    ]);
  });

  it('reports a glob matching nothing once, then picks up the first match', async () => {
    const { dir, sink: rec } = fx;
    const pattern = join(dir, 'sub', '*.log');
    const f = await fx.follow({ patterns: [pattern] });
    await f.pollOnce();
    expect(rec.errors).toEqual([{ source: pattern, reason: 'not_found', detail: `no file matches ${pattern}` }]);
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'sub', 'x.log'), block(1, 2));
    await f.pollOnce();
    expect(rec.lines).toEqual(seqLines(1, 2));
    expect(rec.errors).toHaveLength(1);
  });

  it('never reads a line twice when polls are requested concurrently', async () => {
    const { path, sink: rec } = fx;
    await writeFile(path, '');
    const f = await fx.follow({ patterns: [path] });
    appendFileSync(path, block(1, 1000));
    await Promise.all([f.pollOnce(), f.pollOnce(), f.pollOnce()]);
    expect(rec.lines).toEqual(seqLines(1, 1000));
  });

  it('reads a file larger than the read chunk', async () => {
    const { path, sink: rec } = fx;
    await writeFile(path, block(1, 5000));
    await fx.follow({ patterns: [path], startAt: 'start', readChunkBytes: 100 });
    expect(rec.lines).toEqual(seqLines(1, 5000));
  });

  it('stop() closes every file and the timer, and emits no partial line', async () => {
    const { dir, sink: rec } = fx;
    await writeFile(join(dir, 'a.log'), block(1, 1));
    await writeFile(join(dir, 'b.log'), block(2, 2) + 'partial');
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const f = await fx.follow({ patterns: [join(dir, '*.log')], startAt: 'start', pollIntervalMs: 10 });
    expect(fdsInto(dir)).toHaveLength(2);
    await f.stop();
    expect(fdsInto(dir)).toEqual([]);
    expect(process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length).toBeLessThanOrEqual(before);
    expect(rec.lines).toEqual(seqLines(1, 2));
    appendFileSync(join(dir, 'a.log'), block(3, 3));
    await f.pollOnce(); // a no-op once stopped
    expect(rec.lines).toEqual(seqLines(1, 2));
  });
});
