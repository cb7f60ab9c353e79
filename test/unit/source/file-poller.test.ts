// The poller (FileFollower) alone, polled by hand: what each poll's scan does with the set of followed
// files. A file a glob reaches later is followed from its start; a configured path that is missing is
// reported once while it lasts, not at every poll; a file deleted is let go of once drained.
import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FileFollower } from '../../../src/source/file-follower.js';
import { SeqSink, SeqWriter } from '../../helpers/sequence-log.js';
import { tempDir } from '../../helpers/temp-dir.js';

describe('the poller', () => {
  it('follows what the glob reaches each poll, and lets go of a file deleted', async () => {
    const dir = tempDir('zpe-poller-');
    const sink = new SeqSink();
    const a = new SeqWriter(join(dir, 'a.log'));
    const follower = new FileFollower({ patterns: [join(dir, '*.log')], maxLineBytes: 4096, pollIntervalMs: 3_600_000, deletedHoldMs: 0 }, sink, sink);
    try {
      a.write(5); // there at start: start-at=end skips them
      await follower.start();
      expect(follower.followedCount).toBe(1);
      const b = new SeqWriter(join(dir, 'b.log'));
      b.next = 6;
      b.write(4); // appeared later: read from its start
      await follower.pollOnce();
      expect(follower.followedCount).toBe(2);
      expect(sink.audit(9).missing).toEqual([1, 2, 3, 4, 5]);
      // Deleted: drained, then let go of after two polls that found nothing new (held no longer: deletedHoldMs 0).
      unlinkSync(join(dir, 'b.log'));
      b.close();
      await follower.pollOnce();
      expect(follower.followedCount).toBe(2);
      await follower.pollOnce();
      await follower.pollOnce();
      expect(follower.followedCount).toBe(1);
      a.close();
    } finally {
      await follower.stop();
    }
  });

  it('a missing path is reported once while it stays missing', async () => {
    const dir = tempDir('zpe-poller-');
    const sink = new SeqSink();
    const follower = new FileFollower({ patterns: [join(dir, 'none.log')], maxLineBytes: 4096, pollIntervalMs: 3_600_000 }, sink, sink);
    try {
      await follower.start();
      await follower.pollOnce();
      await follower.pollOnce();
      expect(sink.errors.map((e) => e.reason)).toEqual(['not_found']);
    } finally {
      await follower.stop();
    }
  });
});
