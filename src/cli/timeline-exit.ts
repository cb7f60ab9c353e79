// How backtest and export end: what they left off the timeline, on stderr, and their exit code.
import { skippedText } from '../history/backtest-output.js';
import type { ReplaySummary } from '../history/replay.js';

/** Lines were read and not one became a record on the timeline: nothing in the output is about the gateway. */
const EXIT_NOTHING_ON_TIMELINE = 1;

/** What `backtest` and `export` say on stderr about the lines they left off the timeline, and their exit code. */
export function timelineExit(command: string, s: ReplaySummary, hint: (text: string) => void): number {
  const skipped = skippedText(s);
  if (skipped !== undefined) hint(`zero-plane-exporter: ${command}: skipped ${skipped}\n`);
  if (s.lines > 0 && s.records === 0) {
    hint(`zero-plane-exporter: no line of the input became a record on the timeline (${s.lines} lines read); exit ${EXIT_NOTHING_ON_TIMELINE}\n`);
    return EXIT_NOTHING_ON_TIMELINE;
  }
  return 0;
}
