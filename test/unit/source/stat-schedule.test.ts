// The back-off of stats on idle followed files: a line appended at any moment is still seen within 1 s,
// and an idle file is stat-ed less often than every poll. Stepped by hand with a fake clock, through the
// follower's fs seam counting the stats of each path.
import { appendFileSync, renameSync, writeFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FileFollower } from '../../../src/source/file-follower.js';
import { nodeFs, type FollowerFs } from '../../../src/source/follower-fs.js';
import { IDLE_VISIBILITY_MS, statDeferred } from '../../../src/source/stat-schedule.js';
import { SeqSink, seqBlock } from '../../helpers/sequence-log.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** Stat times of one idle file polled every `interval` ms from 0 to `untilMs` (polls on time). */
function statTimes(interval: number, untilMs: number): number[] {
  const times = [0];
  let idle = 0;
  for (let now = interval; now <= untilMs; now += interval) {
    if (statDeferred(now, times[times.length - 1] ?? 0, idle, interval)) continue;
    times.push(now);
    idle++;
  }
  return times;
}

describe('the stat schedule of idle files', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it.each([250, 100, 50, 333, 1000])('at a %i ms poll, a line appended just after any stat waits at most 1 s for the next, and idle files are stat-ed less often', (interval) => {
    const times = statTimes(interval, 60_000);
    const longestGap = Math.max(...times.slice(1).map((t, i) => t - (times[i] ?? 0)));
    // A line appended just after one stat is seen at the next one.
    expect(longestGap).toBeLessThanOrEqual(Math.max(IDLE_VISIBILITY_MS, interval));
    expect(longestGap).toBeLessThanOrEqual(Math.max(1000, interval));
    const polls = 60_000 / interval;
    // At most every other poll (every third at 250 ms), where the bound leaves room for two intervals.
    if (2 * interval <= IDLE_VISIBILITY_MS) expect(times.length).toBeLessThanOrEqual(Math.ceil(polls / 2) + 1);
    if (interval === 250) expect(times.length).toBeLessThanOrEqual(Math.ceil(polls / 3) + 2);
    if (interval >= IDLE_VISIBILITY_MS) expect(times.length).toBeGreaterThanOrEqual(Math.floor(polls));
  });

  it('a late poll stats a file the on-time poll would have: lateness never adds to the gap', () => {
    // Stat at 0 after 2 idle stats (gap 750 at 250 ms): a poll at 499 defers, the next, late, at 760 stats.
    expect(statDeferred(499, 0, 2, 250)).toBe(true);
    expect(statDeferred(501, 0, 2, 250)).toBe(false);
    expect(statDeferred(760, 0, 2, 250)).toBe(false);
    // Polls coming 500 ms apart (ticks dropped under load): the poll at 500 stats, the next at 1000 would be late.
    expect(statDeferred(500, 0, 2, 250, 500)).toBe(false);
    expect(statDeferred(250, 0, 2, 250, 500)).toBe(true);
    // An interval as long as the bound: every poll stats, even one at the same moment as the last stat.
    expect(statDeferred(1000, 1000, 5, 1000)).toBe(false);
    // A file that changed at its last stat (idle 0) is stat-ed every poll.
    expect(statDeferred(1, 0, 0, 250)).toBe(false);
  });

  it('the follower stats idle files on the schedule and sees an append at its next due stat', async () => {
    const dir = tempDir('zpe-stat-schedule-');
    const paths = ['a.log', 'b.log', 'c.log'].map((n) => join(dir, n));
    paths.forEach((p, i) => writeFileSync(p, seqBlock(2 * i + 1, 2 * i + 2)));
    const stats = new Map<string, number>();
    const fs: FollowerFs = { ...nodeFs, stat: (p) => (stats.set(p, (stats.get(p) ?? 0) + 1), stat(p)) };
    let clock = 1_000_000;
    vi.spyOn(Date, 'now').mockImplementation(() => clock);
    const sink = new SeqSink();
    const follower = new FileFollower({ patterns: [join(dir, '*.log')], maxLineBytes: 4096, pollIntervalMs: 250, startAt: 'start', fs }, sink, sink);
    try {
      await follower.start();
      expect(sink.audit(6).missing).toEqual([]);
      stats.clear();
      // 40 scheduled polls, 10 s of the fake clock, nothing written: far fewer than 40 stats per file.
      for (let i = 0; i < 40; i++) {
        clock += 250;
        await follower.pollScheduled();
      }
      for (const p of paths) {
        expect(stats.get(p) ?? 0).toBeGreaterThanOrEqual(40 / 3 - 1);
        expect(stats.get(p) ?? 0).toBeLessThanOrEqual(40 / 2);
      }
      // An append right after the polls: seen within IDLE_VISIBILITY_MS of the fake clock.
      const appendedAt = clock;
      appendFileSync(paths[1] ?? '', seqBlock(7, 7));
      while (sink.counts.get(7) === undefined && clock - appendedAt < 2000) {
        clock += 250;
        await follower.pollScheduled();
      }
      expect(sink.counts.get(7)).toBe(1);
      expect(clock - appendedAt).toBeLessThanOrEqual(IDLE_VISIBILITY_MS);
      // pollOnce() still stats every file, whatever the schedule.
      stats.clear();
      await follower.pollOnce();
      for (const p of paths) expect(stats.get(p)).toBe(1);
    } finally {
      await follower.stop();
    }
  });

  it('a file renamed within the glob while its stat is deferred, a new file at its path: every line once, the new file within the bound', async () => {
    const dir = tempDir('zpe-stat-schedule-');
    const b = join(dir, 'b.log');
    writeFileSync(b, seqBlock(1, 2));
    let clock = 1_000_000;
    vi.spyOn(Date, 'now').mockImplementation(() => clock);
    const sink = new SeqSink();
    const follower = new FileFollower({ patterns: [join(dir, '*.log')], maxLineBytes: 4096, pollIntervalMs: 250, startAt: 'start' }, sink, sink);
    try {
      await follower.start();
      for (let i = 0; i < 8; i++) {
        clock += 250;
        await follower.pollScheduled();
      }
      // Renamed to a name the glob lists before its old one (a.log is stat-ed first), then written to.
      appendFileSync(b, seqBlock(3, 3));
      renameSync(b, join(dir, 'a.log'));
      writeFileSync(b, seqBlock(4, 5));
      const at = clock;
      while (sink.counts.size < 5 && clock - at < 2000) {
        clock += 250;
        await follower.pollScheduled();
      }
      expect(clock - at).toBeLessThanOrEqual(IDLE_VISIBILITY_MS);
      for (let i = 0; i < 8; i++) {
        clock += 250;
        await follower.pollScheduled();
      }
      const audit = sink.audit(5);
      expect(audit.missing).toEqual([]);
      expect(audit.duplicated).toEqual([]);
      expect(follower.followedCount).toBe(2);
    } finally {
      await follower.stop();
    }
  });
});
