// sources.watch auto: idle followed files are not stat-ed, and their glob is not listed, while their
// directory's watch (inotify) says nothing changed; a line appended, a file created, renamed, or a
// directory replaced is still seen, and where no watch can be set up (limit, network filesystem) the
// follower polls as before. Real files and real fs.watch; the follower is stepped by hand
// (pollScheduled), and each wait for a watch event is a bounded wait on a condition.
import { appendFileSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FollowerGauges } from '../../../src/metrics/follower-gauges.js';
import { DirectoryWatch, watchCap } from '../../../src/source/directory-watch.js';
import { FileFollower, type FollowOptions } from '../../../src/source/file-follower.js';
import { nodeFs, type FollowerFs } from '../../../src/source/follower-fs.js';
import { SeqSink, seqBlock, sleep } from '../../helpers/sequence-log.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** Node's calls, counting stats (of files, not directories), lstats and glob listings. */
class CountingFs implements FollowerFs {
  stats = new Map<string, number>();
  globs = 0;
  constructor(private readonly base: FollowerFs = nodeFs) {}
  statCount(filter: (path: string) => boolean = () => true): number {
    let n = 0;
    for (const [p, c] of this.stats) if (filter(p)) n += c;
    return n;
  }
  stat: FollowerFs['stat'] = (p) => {
    this.stats.set(p, (this.stats.get(p) ?? 0) + 1);
    return this.base.stat(p);
  };
  lstat: FollowerFs['lstat'] = (p) => this.base.lstat(p);
  open: FollowerFs['open'] = (p) => this.base.open(p);
  readdir: FollowerFs['readdir'] = (p) => this.base.readdir(p);
  realpath: FollowerFs['realpath'] = (p) => this.base.realpath(p);
  glob: FollowerFs['glob'] = (p, o) => {
    this.globs++;
    return this.base.glob(p, o);
  };
  statfs: FollowerFs['statfs'] = (p) => this.base.statfs!(p);
  watch: FollowerFs['watch'] = (d, e, err) => this.base.watch!(d, e, err);
}

const FILES = 40;

async function idleFollower(dir: string, fs: FollowerFs, sink: SeqSink, opts: Partial<FollowOptions> = {}): Promise<FileFollower> {
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < FILES; i++) writeFileSync(join(dir, `f${i}.log`), seqBlock(i * 1000, i * 1000));
  const follower = new FileFollower({ patterns: [join(dir, '*.log')], maxLineBytes: 4096, pollIntervalMs: 3_600_000, startAt: 'start', fs, watch: 'auto', ...opts }, sink, sink);
  await follower.start();
  // Two polls: the first after the start stats every file and finds it unchanged; from then on it is idle.
  await follower.pollScheduled();
  await follower.pollScheduled();
  return follower;
}

/** Scheduled polls until `done`, for at most 20 s (a watch event comes through the event loop). */
async function pollUntil(follower: FileFollower, done: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!done() && Date.now() < deadline) {
    await sleep(10);
    await follower.pollScheduled();
  }
}

const isFile = (p: string) => p.endsWith('.log') || /\.log\.\d+$/.test(p);

describe('sources.watch auto: idle files are not stat-ed while their directory is quiet', () => {
  it('idle polls stat no followed file and list no glob; an appended line is seen, only its file is stat-ed again', async () => {
    const tmp = tempDir('zpe-watch-');
    const fs = new CountingFs();
    const sink = new SeqSink();
    const follower = await idleFollower(join(tmp, 'logs'), fs, sink);
    try {
      expect(follower.watchedDirectories.watched).toBe(1);
      expect(follower.directoryModes).toEqual(new Map([['watched', 1]]));
      const stats = fs.statCount(isFile);
      const globs = fs.globs;
      const rested = follower.restedPolls;
      for (let i = 0; i < 5; i++) await follower.pollScheduled();
      expect(fs.statCount(isFile)).toBe(stats);
      expect(fs.globs).toBe(globs);
      // Nothing to do but wait for an event: each poll rested, walking no file.
      expect(follower.restedPolls - rested).toBe(5);
      // An append: the watch names the file, the next poll stats it (and only it) and reads the line.
      const before = new Map(fs.stats);
      appendFileSync(join(tmp, 'logs', 'f7.log'), seqBlock(7001, 7001));
      await pollUntil(follower, () => sink.counts.has(7001));
      expect(sink.counts.get(7001)).toBe(1);
      const statted = [...fs.stats].filter(([p, n]) => isFile(p) && n > (before.get(p) ?? 0)).map(([p]) => p);
      expect(statted).toEqual([join(tmp, 'logs', 'f7.log')]);
      // An append is no entry coming or going: the glob was not listed again.
      expect(fs.globs).toBe(globs);
    } finally {
      await follower.stop();
    }
    for (let i = 0; i < FILES; i++) expect(sink.counts.get(i * 1000)).toBe(1);
    expect(sink.garbled).toEqual([]);
  });

  it('a rename rotation and a new file in the directory lose no line, and a new file is listed', async () => {
    const tmp = tempDir('zpe-watch-');
    const dir = join(tmp, 'logs');
    const fs = new CountingFs();
    const sink = new SeqSink();
    const follower = await idleFollower(dir, fs, sink);
    try {
      const path = join(dir, 'f3.log');
      appendFileSync(path, seqBlock(3001, 3010));
      renameSync(path, `${path}.1`);
      appendFileSync(`${path}.1`, seqBlock(3011, 3020));
      writeFileSync(path, seqBlock(3021, 3030));
      writeFileSync(join(dir, 'new.log'), seqBlock(90_000, 90_004));
      await pollUntil(follower, () => sink.counts.has(3030) && sink.counts.has(90_004) && sink.counts.has(3020));
    } finally {
      await follower.stop();
    }
    for (let n = 3000; n <= 3030; n++) expect(sink.counts.get(n), `line ${n}`).toBe(1);
    for (let n = 90_000; n <= 90_004; n++) expect(sink.counts.get(n), `line ${n}`).toBe(1);
  });

  it('a directory removed and made again: its watch is set up anew and the new file is followed', async () => {
    const tmp = tempDir('zpe-watch-');
    const dir = join(tmp, 'logs');
    const fs = new CountingFs();
    const sink = new SeqSink();
    const follower = await idleFollower(dir, fs, sink);
    try {
      rmSync(dir, { recursive: true });
      await follower.pollScheduled();
      mkdirSync(dir);
      writeFileSync(join(dir, 'again.log'), seqBlock(50_000, 50_002));
      await pollUntil(follower, () => sink.counts.has(50_002));
      expect(follower.watchedDirectories.watched).toBe(1);
      // The new directory's watch works: an append is seen.
      appendFileSync(join(dir, 'again.log'), seqBlock(50_003, 50_003));
      await pollUntil(follower, () => sink.counts.has(50_003));
    } finally {
      await follower.stop();
    }
    for (let n = 50_000; n <= 50_003; n++) expect(sink.counts.get(n), `line ${n}`).toBe(1);
  });

  it('one directory per file (a glob like pods/*/app.log): idle polls stat neither files nor directories; a directory moved away and made again loses no line', async () => {
    const pods = join(tempDir('zpe-watch-'), 'pods');
    for (let i = 0; i < 5; i++) {
      mkdirSync(join(pods, `p${i}`), { recursive: true });
      writeFileSync(join(pods, `p${i}`, 'app.log'), seqBlock(i * 1000, i * 1000));
    }
    const fs = new CountingFs();
    const sink = new SeqSink();
    const follower = new FileFollower({ patterns: [join(pods, '*', 'app.log')], maxLineBytes: 4096, pollIntervalMs: 3_600_000, startAt: 'start', fs, watch: 'auto' }, sink, sink);
    await follower.start();
    try {
      await follower.pollScheduled();
      await follower.pollScheduled();
      expect(follower.watchedDirectories.watched).toBe(5);
      const stats = fs.statCount();
      for (let i = 0; i < 5; i++) await follower.pollScheduled();
      // The glob (its directory part is dynamic) is listed every poll; nothing is stat-ed.
      expect(fs.statCount()).toBe(stats);
      appendFileSync(join(pods, 'p1', 'app.log'), seqBlock(1001, 1002));
      renameSync(join(pods, 'p1'), join(pods, 'p1-old'));
      appendFileSync(join(pods, 'p1-old', 'app.log'), seqBlock(1003, 1003));
      mkdirSync(join(pods, 'p1'));
      writeFileSync(join(pods, 'p1', 'app.log'), seqBlock(1004, 1005));
      await pollUntil(follower, () => [1001, 1002, 1003, 1004, 1005].every((n) => sink.counts.has(n)));
    } finally {
      await follower.stop();
    }
    for (const n of [0, 1000, 1001, 1002, 1003, 1004, 1005, 2000, 3000, 4000]) expect(sink.counts.get(n), `line ${n}`).toBe(1);
  });

  it('an event just after a stat, at a poll the back-off would skip the file: it is stat-ed then, not at the next rescan', async () => {
    // The event is that poll's only: a poll that took it and left the file to the back-off (the gap after
    // a stat, 250 → 750 ms) lost it, and the file waited for the safety poll, 10 s (seen under ulimit -n 1024).
    const tmp = tempDir('zpe-watch-');
    const fs = new CountingFs();
    const sink = new SeqSink();
    const follower = await idleFollower(join(tmp, 'logs'), fs, sink, { pollIntervalMs: 250 });
    try {
      for (let round = 0; round < 3; round++) {
        await follower.pollOnce();
        const n = 20_000 + round;
        appendFileSync(join(tmp, 'logs', 'f5.log'), seqBlock(n, n));
        const deadline = Date.now() + 20_000;
        // Polls as the timer runs them, until the line is read: well within the rescan interval (10 s).
        const started = Date.now();
        while (!sink.counts.has(n) && Date.now() < deadline) {
          await sleep(20);
          await follower.pollScheduled();
        }
        expect(sink.counts.get(n)).toBe(1);
        // On a loaded machine polls come late; the safety poll would have taken 10 s.
        expect(Date.now() - started).toBeLessThan(9_000);
      }
    } finally {
      await follower.stop();
    }
  });

  it('a new file in the glob directory whose event is lost: listed at the next poll (the directory mtime), not at the rescan', async () => {
    const tmp = tempDir('zpe-watch-');
    const fs = new CountingFs();
    fs.watch = (d, _e, err) => nodeFs.watch!(d, () => undefined, err);
    const sink = new SeqSink();
    const follower = await idleFollower(join(tmp, 'logs'), fs, sink, { rescanIntervalMs: 3_600_000 });
    try {
      const rested = follower.restedPolls;
      await follower.pollScheduled();
      expect(follower.restedPolls).toBe(rested + 1);
      // Past the directory mtime's tick of the last listing (its granularity may be coarse).
      await sleep(20);
      writeFileSync(join(tmp, 'logs', 'new.log'), seqBlock(70_000, 70_001));
      await follower.pollScheduled();
      expect(sink.counts.get(70_001)).toBe(1);
    } finally {
      await follower.stop();
    }
  });

  it('a configured path missing: looked for every poll (no rest), and read once it is there, with no event', async () => {
    const tmp = tempDir('zpe-watch-');
    const fs = new CountingFs();
    fs.watch = (d, _e, err) => nodeFs.watch!(d, () => undefined, err);
    const sink = new SeqSink();
    const later = join(tmp, 'logs', 'later.txt');
    const follower = await idleFollower(join(tmp, 'logs'), fs, sink, { rescanIntervalMs: 3_600_000, patterns: [join(tmp, 'logs', '*.log'), later] });
    try {
      for (let i = 0; i < 3; i++) await follower.pollScheduled();
      expect(follower.restedPolls).toBe(0);
      writeFileSync(later, seqBlock(80_000, 80_001));
      await follower.pollScheduled();
      expect(sink.counts.get(80_001)).toBe(1);
    } finally {
      await follower.stop();
    }
  });

  it('events a watch never delivers: the safety poll (rescanInterval) still finds the line', async () => {
    const tmp = tempDir('zpe-watch-');
    // A watch that drops every event (what an inotify queue overflow does to some).
    const fs = new CountingFs();
    fs.watch = (d, _e, err) => nodeFs.watch!(d, () => undefined, err);
    const sink = new SeqSink();
    const follower = await idleFollower(join(tmp, 'logs'), fs, sink, { rescanIntervalMs: 300 });
    try {
      appendFileSync(join(tmp, 'logs', 'f1.log'), seqBlock(1001, 1001));
      await pollUntil(follower, () => sink.counts.has(1001));
      expect(sink.counts.get(1001)).toBe(1);
    } finally {
      await follower.stop();
    }
  });
});

describe('sources.watch auto: where no watch can be set up, the follower polls', () => {
  it('no inotify watch left (ENOSPC): reported once as watch_limit, every file stat-ed each poll, lines seen', async () => {
    const tmp = tempDir('zpe-watch-');
    const fs = new CountingFs();
    fs.watch = () => {
      throw Object.assign(new Error('ENOSPC: System limit for number of file watchers reached'), { code: 'ENOSPC' });
    };
    const fallbacks: string[] = [];
    const sink = new SeqSink();
    (sink as SeqSink & { watchFallback: unknown }).watchFallback = (_dir: string, reason: string) => fallbacks.push(reason);
    const follower = await idleFollower(join(tmp, 'logs'), fs, sink);
    try {
      expect(follower.watchedDirectories).toEqual({ watched: 0, fallbacks: 1 });
      expect(follower.directoryModes).toEqual(new Map([['watch_limit', 1]]));
      const before = fs.statCount(isFile);
      await follower.pollScheduled();
      expect(fs.statCount(isFile) - before).toBe(FILES);
      appendFileSync(join(tmp, 'logs', 'f2.log'), seqBlock(2001, 2001));
      await follower.pollScheduled();
      expect(sink.counts.get(2001)).toBe(1);
    } finally {
      await follower.stop();
    }
    expect(fallbacks).toEqual(['watch_limit']);
  });

  it('a network filesystem (NFS magic from statfs): not watched, reported as unreliable_fs, polled', async () => {
    const tmp = tempDir('zpe-watch-');
    const fs = new CountingFs();
    let watches = 0;
    fs.statfs = () => Promise.resolve({ type: 0x6969 });
    fs.watch = (d, e, err) => {
      watches++;
      return nodeFs.watch!(d, e, err);
    };
    const fallbacks: string[] = [];
    const sink = new SeqSink();
    (sink as SeqSink & { watchFallback: unknown }).watchFallback = (_dir: string, reason: string) => fallbacks.push(reason);
    const follower = await idleFollower(join(tmp, 'logs'), fs, sink);
    try {
      const globs = fs.globs;
      await follower.pollScheduled();
      // Polled as with sources.watch off: the glob listed, every file stat-ed.
      expect(fs.globs).toBe(globs + 1);
      appendFileSync(join(tmp, 'logs', 'f2.log'), seqBlock(2001, 2001));
      await follower.pollScheduled();
      expect(sink.counts.get(2001)).toBe(1);
      expect(follower.directoryModes).toEqual(new Map([['unreliable_fs', 1]]));
    } finally {
      await follower.stop();
    }
    expect(watches).toBe(0);
    expect(fallbacks).toEqual(['unreliable_fs']);
    expect(follower.watchedDirectories.fallbacks).toBe(0);
  });

  it('sources.watch off: no watch, every poll lists the glob', async () => {
    const tmp = tempDir('zpe-watch-');
    const fs = new CountingFs();
    const sink = new SeqSink();
    const follower = await idleFollower(join(tmp, 'logs'), fs, sink, { watch: 'off' });
    try {
      const globs = fs.globs;
      await follower.pollScheduled();
      await follower.pollScheduled();
      expect(fs.globs).toBe(globs + 2);
      expect(follower.watchedDirectories.watched).toBe(0);
      // Said on /metrics: every directory polled, because sources.watch is off; the other reasons at 0.
      const gauges = new FollowerGauges(follower);
      gauges.refresh();
      expect(gauges.watched.get([])).toBe(0);
      expect(gauges.polled.entries()).toEqual([
        [['off'], 1],
        [['unreliable_fs'], 0],
        [['watch_limit'], 0],
        [['watch_error'], 0],
        [['absent'], 0],
      ]);
    } finally {
      await follower.stop();
    }
  });

  it('the watch cap is a quarter of max_user_watches, at most 8192', () => {
    expect(watchCap(8192)).toBe(2048);
    expect(watchCap(1_000_000)).toBe(8192);
    expect(watchCap(3)).toBe(0);
  });

  it('only globs whose dynamic part is the last segment keep their listing', () => {
    expect(DirectoryWatch.listedDir('/var/log/*.log')).toBe('/var/log');
    expect(DirectoryWatch.listedDir('/var/log/*/access.log')).toBeUndefined();
    expect(DirectoryWatch.listedDir('/var/log/**/*.log')).toBeUndefined();
    expect(DirectoryWatch.listedDir('/var/{a,b}/*.log')).toBeUndefined();
  });
});
