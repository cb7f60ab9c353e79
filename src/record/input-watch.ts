// A source's first lines, watched once: were most of them skipped (the input is not understood), and which
// label paths never resolved. What it finds is said once (serve logs it, report prints it). Its header part
// looks at the first records (input.headerWatch) for a wanted response header field where the preset keeps
// them, until one shows up; then the watch is dropped and costs the line path nothing. A source with none
// stays watched (only its records pay for it), so the self-metric can tell when headers do arrive.
import { byCodeUnits } from '../code-unit-order.js';
import type { ParseResult } from './parse-record.js';

/** Lines a watch looks at before it says what it found. */
export const WATCH_LINES = 100;
/** Skipped lines kept to try the other presets on; also records kept to look for headers elsewhere in. */
const SAMPLES = 20;

export const LABELS = ['model', 'route', 'cohort'] as const;
export type Label = (typeof LABELS)[number];

/** What one line showed a watch, as plain data: a worker thread of `report` sends its first ones back. */
export interface WatchOutcome {
  /** The skip reason; undefined for a record. */
  reason?: string;
  /** For a record: whether model, route and cohort held a value. */
  labels?: [boolean, boolean, boolean];
  /** A skipped line's text, while samples are still kept. */
  sample?: string;
}

/** A header watch as plain data: a worker thread of `report` sends its own back (source-inputs.ts continueWatch). */
export interface HeaderWatchState {
  /** Records read before the first that carried a wanted response header field (all of them, if none did). */
  headerless: number;
  seen: boolean;
  /** The first of those records' text. */
  samples: string[];
}

export class InputWatch {
  lines = 0;
  skipped = 0;
  records = 0;
  readonly reasons = new Map<string, number>();
  /** The first skipped lines, to see whether another preset reads them. */
  readonly samples: string[] = [];
  /** Records whose label was not empty. */
  readonly resolved: Record<Label, number> = { model: 0, route: 0, cohort: 0 };
  /** Every outcome seen, when asked to keep them (the second half of a file `report` splits). */
  readonly outcomes: WatchOutcome[] | undefined;
  /** The lines part (WATCH_LINES, WATCH_MS) has said what it found; apply() ignores further lines. */
  linesDone = false;
  /** The header part: records read so far, while none carried a wanted response header field. */
  headerless = 0;
  /** A record carried one: the header part is over. */
  headerSeen = false;
  /** None did within input.headerWatch, and that was said. */
  headersWarned = false;
  /** The first records, to look for the headers under other keys in. */
  readonly recordSamples: string[] = [];

  constructor(
    readonly startedAt: number,
    keepOutcomes = false,
  ) {
    this.outcomes = keepOutcomes ? [] : undefined;
  }

  /** One counted line (`text` only for a skipped one); true once the watch has seen enough. */
  see(parsed: ParseResult, text: string | undefined): boolean {
    if (parsed.ok) {
      const r = parsed.record;
      return this.apply({ labels: [r.model !== '', r.route !== '', r.cohort !== ''] });
    }
    return this.apply(text !== undefined && this.samples.length < SAMPLES ? { reason: parsed.reason, sample: text } : { reason: parsed.reason });
  }

  /** A line longer than input.maxLineBytes (never held, so never a sample). */
  oversize(): boolean {
    return this.apply({ reason: 'too_long' });
  }

  /** One line's outcome, seen here or by another watch of the same source; true once the watch has seen enough. */
  apply(o: WatchOutcome): boolean {
    if (this.linesDone) return false;
    this.outcomes?.push(o);
    this.lines++;
    if (o.reason === undefined) {
      this.records++;
      const [model, route, cohort] = o.labels ?? [false, false, false];
      if (model) this.resolved.model++;
      if (route) this.resolved.route++;
      if (cohort) this.resolved.cohort++;
    } else {
      this.skipped++;
      this.reasons.set(o.reason, (this.reasons.get(o.reason) ?? 0) + 1);
      if (o.sample !== undefined && this.samples.length < SAMPLES) this.samples.push(o.sample);
    }
    return this.lines >= WATCH_LINES;
  }

  /** One record while the header part is open: whether it carried a wanted response header field, and (wantsSample) its text. */
  headerRecord(carried: boolean, text: string | undefined): void {
    if (carried) {
      this.headerSeen = true;
      return;
    }
    this.headerless++;
    if (text !== undefined && this.recordSamples.length < SAMPLES) this.recordSamples.push(text);
  }

  /** A record's text would be kept (headerRecord). */
  wantsSample(): boolean {
    return this.recordSamples.length < SAMPLES;
  }

  /** Both parts are over: the source no longer needs watching. */
  done(): boolean {
    return this.linesDone && this.headerSeen;
  }

  /** Most of the lines were skipped. */
  notUnderstood(): boolean {
    return this.lines > 0 && 2 * this.skipped > this.lines;
  }

  /** The most frequent skip reasons, most frequent first. */
  topReasons(n = 3): [string, number][] {
    return [...this.reasons].sort((a, b) => b[1] - a[1] || byCodeUnits(a[0], b[0])).slice(0, n);
  }

  /** Labels that never resolved, when there were records to resolve them in. */
  unresolved(): Label[] {
    return this.records === 0 ? [] : LABELS.filter((l) => this.resolved[l] === 0);
  }
}
