// The cooldown of addresses cut for sending under the minimum body rate (src/ingest/slow-sources.ts), the
// one set both ingest endpoints share.
import { describe, expect, it } from 'vitest';
import { SlowSources } from '../../../src/ingest/slow-sources.js';

describe('SlowSources', () => {
  it('refuses a cut address until its cooldown ends, then lets it send again', () => {
    const s = new SlowSources();
    expect(s.waitMs('10.0.0.1', 1_000)).toBeUndefined();
    s.cut('10.0.0.1', 30_000, 1_000);
    expect(s.waitMs('10.0.0.1', 1_000)).toBe(30_000);
    expect(s.waitMs('10.0.0.1', 30_999)).toBe(1);
    expect(s.waitMs('10.0.0.2', 2_000)).toBeUndefined();
    expect(s.waitMs('10.0.0.1', 31_000)).toBeUndefined();
    // Expired is forgotten: still free a moment later.
    expect(s.waitMs('10.0.0.1', 31_001)).toBeUndefined();
  });

  it('a cooldown of 0 cuts nothing', () => {
    const s = new SlowSources();
    s.cut('10.0.0.1', 0, 1_000);
    expect(s.waitMs('10.0.0.1', 1_000)).toBeUndefined();
  });

  it('remembers 4096 addresses at most, letting the oldest go first; a repeat cut does not evict another', () => {
    const s = new SlowSources();
    for (let i = 0; i < 4096; i++) s.cut(`a${i}`, 60_000, 0);
    s.cut('a5', 60_000, 10);
    expect(s.waitMs('a0', 20)).toBe(59_980);
    s.cut('new', 60_000, 30);
    expect(s.waitMs('a0', 40)).toBeUndefined();
    expect(s.waitMs('a1', 40)).toBe(59_960);
    expect(s.waitMs('new', 40)).toBe(60_000 - 10);
  });
});
