// When the poll timer runs the next cycle: never overlapping one under way, and never leaving lines unread
// for a whole interval when the file has more than one poll may read.
import { describe, expect, it, vi } from 'vitest';
import { followerFixture } from '../../helpers/follower-fixture.js';
import { waitFor } from '../../helpers/sequence-log.js';

describe('FileFollower poll schedule', () => {
  const fx = followerFixture({ prefix: 'zpe-schedule-' });

  it('a ticked poll stopped at the per-poll budget is followed at once, not an interval later', async () => {
    const { sink, w } = fx;
    w.write(600); // ~20 KiB: 20 polls at 1 KiB each, 40 s at one per interval
    const started = Date.now();
    const follower = await fx.follow({ maxReadBytesPerPoll: 1024, readChunkBytes: 256, pollIntervalMs: 2_000 });
    expect(sink.counts.size).toBeLessThan(40); // start()'s own poll read its 1 KiB and no more
    // The first tick comes at 2 s; the polls it is followed by read the rest without waiting for more ticks.
    await waitFor(() => sink.counts.size === 600, 8_000, 'every line read');
    expect(Date.now() - started).toBeLessThan(8_000);
    sink.expectExactlyOnce(600);
    await follower.stop();
  });

  it('a tick held back by a cycle runs at once only if that cycle read something', async () => {
    const { sink, w } = fx;
    // The poll timer and the immediate it schedules are faked (the file system is real), so which of
    // them is pending can be asked without timing anything.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setImmediate', 'clearImmediate'] });
    try {
      // An interval of IDLE_VISIBILITY_MS or more stats the file every poll: no back-off (stat-schedule.ts),
      // whose real clock would otherwise defer the stat of a file idle a moment ago.
      const follower = await fx.follow({ pollIntervalMs: 1000 });
      const cycleWithTickHeld = async () => {
        vi.advanceTimersByTime(1000); // a tick starts a cycle
        vi.advanceTimersByTime(1000); // the next comes while it runs, and is held
        await follower.snapshot(() => undefined); // once the cycle is over
      };
      expect(vi.getTimerCount()).toBe(1); // the poll timer
      await cycleWithTickHeld(); // nothing new in the file
      expect(vi.getTimerCount()).toBe(1); // the held tick waits for the timer: many idle files never spin
      w.write(10);
      await cycleWithTickHeld();
      expect(sink.counts.size).toBe(10);
      expect(vi.getTimerCount()).toBe(2); // and an immediate: lines came, more may be waiting
      await follower.stop();
    } finally {
      vi.useRealTimers();
    }
  });

  it('polls the caller runs with pollOnce() stop at the budget and are not continued by themselves', async () => {
    const { sink, w } = fx;
    w.write(600);
    const follower = await fx.follow({ maxReadBytesPerPoll: 1024, readChunkBytes: 256 }); // the fixture's interval: 60 s
    const afterStart = sink.counts.size;
    await follower.pollOnce();
    const afterOne = sink.counts.size;
    await new Promise((r) => setTimeout(r, 200));
    // One poll's worth more, and nothing after it: a test (or a shutdown) decides when the next one runs.
    expect(afterOne).toBeGreaterThan(afterStart);
    expect(sink.counts.size).toBe(afterOne);
    expect(afterOne).toBeLessThan(80);
  });
});
