// When the poller stats a followed file that has not changed: every poll while it changes, then less
// often the longer it stays idle, never so seldom that a line appended to it waits longer than
// IDLE_VISIBILITY_MS. Stat-ing 1,500 idle files every 250 ms was most of an idle serve's CPU.

/**
 * The longest an idle file goes between two stats. A line appended just after one is seen at the next,
 * so it reaches /metrics within this plus one cycle and a scrape: 750 ms leaves 250 ms of a 1 s bound
 * for the cycle itself on a loaded machine.
 */
export const IDLE_VISIBILITY_MS = 750;

/**
 * The time from one stat of a file to the next, after `idleStats` stats in a row found it unchanged:
 * doubling per idle stat (1, 2, 4 … poll intervals) up to IDLE_VISIBILITY_MS, and never under one
 * interval (an interval of IDLE_VISIBILITY_MS or longer stats every file every poll, as before).
 */
function idleGapMs(idleStats: number, pollIntervalMs: number): number {
  return Math.max(pollIntervalMs, Math.min(IDLE_VISIBILITY_MS, pollIntervalMs * 2 ** Math.min(idleStats, 30)));
}

/**
 * Whether a poll at `nowMs` may leave the file un-stat-ed, its last stat at `lastStatMs` standing: only
 * when the next poll, `nextPollInMs` on (an interval, or longer when polls come late on a loaded
 * machine), still comes within the gap. So the poll that stats it is the last one before the gap ends.
 */
export function statDeferred(nowMs: number, lastStatMs: number, idleStats: number, pollIntervalMs: number, nextPollInMs = pollIntervalMs): boolean {
  const gap = idleGapMs(idleStats, pollIntervalMs);
  return idleStats > 0 && gap > pollIntervalMs && nowMs + Math.max(pollIntervalMs, nextPollInMs) <= lastStatMs + gap;
}
