// The `repeats` section of the report: the most repeated prompts (by hash) and how often their answers
// came back cached. Present only when some record carried a prompt hash, so reports of logs without one
// (every gateway log until it is set up: docs/repeats.md) stay as they were.
import type { RepeatedPrompts, RepeatsSummary } from '../windows/repeated-prompts.js';

/** The `repeats` key of the report JSON: count is an upper bound (exact while fewer than repeats.k hashes were seen), count − error a lower one. */
export type ReportRepeats = RepeatsSummary;

/** The report's `repeats` key, or nothing when no record carried a prompt hash. */
export function repeatsSection(repeats: RepeatedPrompts, n: number): { repeats?: ReportRepeats } {
  return repeats.requests === 0 ? {} : { repeats: repeats.summary(n) };
}

/** The text report's lines: one per top hash; nothing without hashes. */
export function repeatsText(r: ReportRepeats | undefined): string[] {
  if (r === undefined) return [];
  const share = (x: number | null) => (x === null ? 'n/a' : `${(x * 100).toFixed(1)} %`);
  // An inexact count (a hash kept after others were let go) is shown as its bounds.
  const rows = r.top.map(
    (t) => `${String(t.rank).padStart(4)} ${t.hash.padEnd(34)}${(t.error > 0 ? `${t.count - t.error}–${t.count}` : String(t.count)).padStart(10)}  ${share(t.cachedShare).padStart(7)}`,
  );
  const header = `${'rank'.padStart(4)} ${'prompt hash'.padEnd(34)}${'requests'.padStart(10)}  ${'cached'.padStart(7)}`;
  return [`repeated prompts: ${r.requests} requests with a prompt hash, ${share(r.cachedShare)} cached; top ${r.top.length}:`, header, ...rows, ''];
}
