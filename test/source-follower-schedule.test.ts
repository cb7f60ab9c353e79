// When the poll timer runs the next cycle: never overlapping one under way, and never leaving lines unread
// for a whole interval when the file has more than one poll may read.
import { describe, expect, it } from 'vitest';
import { followerFixture } from './helpers/follower-fixture.js';
import { waitFor } from './helpers/sequence-log.js';

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
