// `input.preset: auto`: which preset reads a source, decided from its first lines. A preset reads a line
// when it yields a latency and the line carries at least one of the wanted headers where the preset keeps
// them; the first line some preset reads decides (ties go to the earlier preset in PRESET_NAMES). Until
// then, a line every preset reads the same way (not JSON, or the same parse error for all) is counted at
// once, and a line the presets disagree on is held, to be counted with the preset chosen. So no line is
// dropped or counted twice, and once the source has its preset the detector is gone from the line path.
import type { Mapping, PresetName } from './presets.js';
import type { ParseResult, RecordParser } from './parse-record.js';

export interface Candidate {
  preset: PresetName;
  mapping: Mapping;
  parser: RecordParser;
}

/** What one line told the detector. */
export type Offer =
  /** `preset` reads this line: the source is read with it from now on. */
  | { kind: 'decided'; preset: PresetName }
  /** Every preset gives this same result (a parse error): count it now. */
  | { kind: 'agreed'; result: ParseResult }
  /** The presets disagree: the line is held until the decision. */
  | { kind: 'held' };

/** Lines held at most before the presets are compared on what they read so far. */
export const DETECT_MAX_HELD_LINES = 64;
export const DETECT_MAX_HELD_BYTES = 1024 * 1024;
/** Lines offered at most before a decision is forced (a source no preset reads costs no more than this). */
export const DETECT_MAX_LINES = 1000;

const INVALID_JSON: ParseResult = { ok: false, reason: 'invalid_json' };

export class PresetDetector {
  /** Held lines, in arrival order. */
  readonly held: string[] = [];
  /** Clock time of the first line held (for the timed decision in `serve`), undefined when none is. */
  heldSince: number | undefined;
  private heldBytes = 0;
  private offered = 0;
  /** Per candidate: how many held lines it makes a record of. */
  private readonly records: number[];

  constructor(readonly candidates: readonly Candidate[]) {
    this.records = candidates.map(() => 0);
  }

  offer(text: string, now: number): Offer {
    this.offered++;
    let obj: unknown;
    try {
      obj = JSON.parse(text);
    } catch {
      return { kind: 'agreed', result: INVALID_JSON };
    }
    const results = this.candidates.map((c) => c.parser.parseValue(obj));
    const reader = this.candidates.findIndex((c, i) => results[i]?.ok === true && c.parser.carriesHeaders(obj));
    if (reader >= 0) return { kind: 'decided', preset: (this.candidates[reader] as Candidate).preset };
    const first = results[0] as ParseResult;
    if (!first.ok && results.every((r) => !r.ok && r.reason === first.reason)) return { kind: 'agreed', result: first };
    results.forEach((r, i) => {
      if (r.ok) this.records[i] = (this.records[i] as number) + 1;
    });
    this.held.push(text);
    this.heldBytes += text.length;
    this.heldSince ??= now;
    return { kind: 'held' };
  }

  /** Whether the detector must decide now rather than wait for a line some preset reads. */
  full(): boolean {
    return this.held.length >= DETECT_MAX_HELD_LINES || this.heldBytes >= DETECT_MAX_HELD_BYTES || this.offered >= DETECT_MAX_LINES;
  }

  /** The decision when no line was read: the preset that makes records of the most held lines (ties: the earlier). */
  choose(): PresetName {
    let best = 0;
    for (let i = 1; i < this.records.length; i++) if ((this.records[i] as number) > (this.records[best] as number)) best = i;
    return (this.candidates[best] as Candidate).preset;
  }
}

/** The candidate that reads the most of `lines` (at least half of them), or undefined: the "try this preset" hint. */
export function bestReader(candidates: readonly Candidate[], lines: readonly string[]): Candidate | undefined {
  let best: Candidate | undefined;
  let bestCount = 0;
  for (const c of candidates) {
    let count = 0;
    for (const line of lines) {
      let obj: unknown;
      try {
        obj = JSON.parse(line);
      } catch {
        continue;
      }
      if (c.parser.parseValue(obj).ok && c.parser.carriesHeaders(obj)) count++;
    }
    if (count > bestCount) [best, bestCount] = [c, count];
  }
  return bestCount > 0 && 2 * bestCount >= lines.length ? best : undefined;
}
