// `input.preset: auto`: which preset reads a stream (a file generation, an ingest body, stdin), decided by
// evidence. A line decides for a preset only when it shows that preset's signature (structure only its
// gateway writes: presets.ts SIGNATURES), has a latency the preset reads, and carries at least one wanted
// header field where the preset keeps them (any value, "-" and null included). Order never settles a tie:
// a line that is evidence for two presets is held like one that is evidence for none (a health probe with
// no Zero-Plane header), and waits for a line that decides. At a bound (lines, bytes, time, the end of the
// input) the held lines are decided by structure alone when exactly one preset's signature reads them, and
// otherwise said out loud (decide() below). A line every preset reads the same way (not JSON, or the same
// parse error for all) is counted at once; the rest are held and counted with the preset chosen, so no
// line is dropped or counted twice, and once a stream has its preset the detector is gone from the line path.
import { SIGNATURES, type Mapping, type PresetName } from './presets.js';
import { parseApacheEscaped } from './apache-escapes.js';
import type { ParseResult, RecordParser } from './parse-record.js';

export interface Candidate {
  preset: PresetName;
  mapping: Mapping;
  parser: RecordParser;
}

/**
 * Why a preset was chosen:
 * - `evidence`: a line with its signature and a wanted header field at its paths;
 * - `previous`: at a bound, held lines without evidence that the preset of the stream before (the file's
 *   previous generation, the ingest body before) reads by structure;
 * - `signature`: at a bound, exactly one preset's structure reads the held lines, but no header was seen;
 * - `latency`: at a bound, no preset's structure matched and exactly one preset reads a latency in them;
 * - `ambiguous`: at a bound, several presets read them alike: the one reading the most (then the earlier)
 *   is a best effort, never silent (warned);
 * - `configured`, `given`: input.preset, `report`'s up-front detection of a file it splits.
 */
export type DecisionBasis = 'evidence' | 'previous' | 'signature' | 'latency' | 'ambiguous' | 'configured' | 'given';

/** What a decision rested on, for its log line. */
export interface Evidence {
  basis: DecisionBasis;
  /** Signature keys of the chosen preset seen on the lines it rested on. */
  signature: string[];
  /** The wanted header field seen at the preset's paths; undefined when decided without one. */
  header: string | undefined;
  /** Lines held before the decision (counted with it). */
  held: number;
  /** With `ambiguous`: every preset that read the held lines alike. */
  candidates?: PresetName[];
}

/** What one line told the detector. */
export type Offer =
  /** `preset` reads this line: the stream is read with it from now on. */
  | { kind: 'decided'; preset: PresetName; evidence: Evidence }
  /** Every preset gives this same result (a parse error): count it now. */
  | { kind: 'agreed'; result: ParseResult }
  /** No single preset has evidence in this line: it is held until the decision. */
  | { kind: 'held' };

/** Lines held at most before the detector decides on what it has (a bound: see decide()). */
export const DETECT_MAX_HELD_LINES = 64;
export const DETECT_MAX_HELD_BYTES = 1024 * 1024;
/** Lines offered at most before a decision is forced while lines are held. */
export const DETECT_MAX_LINES = 1000;

const INVALID_JSON: ParseResult = { ok: false, reason: 'invalid_json' };

export class PresetDetector {
  /** Held lines, in arrival order. */
  readonly held: string[] = [];
  /** Per held line: bit i set when candidate i reads it and it shows that candidate's signature. */
  readonly heldSigned: number[] = [];
  /** Clock time of the first line held (for the timed decision in `serve`), undefined when none is. */
  heldSince: number | undefined;
  private heldBytes = 0;
  private offered = 0;
  /** Per candidate: held lines it reads (a latency), and held lines it reads that show its signature. */
  private readonly reads: number[];
  private readonly signatureReads: number[];
  /** Per candidate: signature keys seen on the held lines it reads. */
  private readonly signatureKeys: Set<string>[];

  constructor(readonly candidates: readonly Candidate[]) {
    this.reads = candidates.map(() => 0);
    this.signatureReads = candidates.map(() => 0);
    this.signatureKeys = candidates.map(() => new Set());
  }

  offer(text: string, now: number): Offer {
    this.offered++;
    let obj: unknown;
    let escapedOnly = false;
    try {
      obj = JSON.parse(text);
    } catch {
      obj = this.candidates.some((c) => c.parser.hexEscapes) ? parseApacheEscaped(text) : undefined;
      if (obj === undefined) return { kind: 'agreed', result: INVALID_JSON };
      escapedOnly = true;
    }
    // JSON only once Apache's \xhh escapes are decoded: JSON for the presets that decode them, not for the rest.
    const readable = (c: Candidate): boolean => !escapedOnly || c.parser.hexEscapes;
    const results = this.candidates.map((c) => (readable(c) ? c.parser.parseValue(obj) : INVALID_JSON));
    const first = results[0] as ParseResult;
    if (!first.ok && results.every((r) => !r.ok && r.reason === first.reason)) return { kind: 'agreed', result: first };
    // Only objects get here: a non-object is `not_object` for every preset.
    const o = obj as Record<string, unknown>;
    let decisive = -1;
    let header: string | undefined;
    let ties = 0;
    const signatures = this.candidates.map((c, i) => (results[i]?.ok === true ? SIGNATURES[c.preset](o) : []));
    this.candidates.forEach((c, i) => {
      if ((signatures[i] as string[]).length === 0) return;
      const field = c.parser.headerEvidence(o);
      if (field === undefined) return;
      ties++;
      decisive = i;
      header = field;
    });
    if (ties === 1) {
      const c = this.candidates[decisive] as Candidate;
      return { kind: 'decided', preset: c.preset, evidence: { basis: 'evidence', signature: signatures[decisive] as string[], header, held: this.held.length } };
    }
    let signed = 0;
    results.forEach((r, i) => {
      if (!r.ok) return;
      this.reads[i] = (this.reads[i] as number) + 1;
      const keys = signatures[i] as string[];
      if (keys.length === 0) return;
      signed |= 1 << i;
      this.signatureReads[i] = (this.signatureReads[i] as number) + 1;
      for (const k of keys) (this.signatureKeys[i] as Set<string>).add(k);
    });
    this.held.push(text);
    this.heldSigned.push(signed);
    this.heldBytes += text.length;
    this.heldSince ??= now;
    return { kind: 'held' };
  }

  /** Whether the detector must decide now rather than wait for a line with evidence. */
  full(): boolean {
    return this.held.length >= DETECT_MAX_HELD_LINES || this.heldBytes >= DETECT_MAX_HELD_BYTES || this.offered >= DETECT_MAX_LINES;
  }

  /**
   * The decision at a bound, on the held lines (none of which had evidence for exactly one preset):
   * structure when exactly one preset's signature reads them; else the stream before's preset, when it is
   * among those that read them; else, when exactly one preset reads a latency in them and none shows its
   * signature, that one; else a best effort marked `ambiguous`. `unread` when no preset reads any of them
   * (they differ only in their parse errors): nothing to decide on, the stream keeps detecting after they
   * are counted (take()). Undefined when nothing is held.
   */
  decide(previous: PresetName | undefined): { preset: PresetName; evidence: Evidence } | 'unread' | undefined {
    if (this.held.length === 0) {
      this.offered = 0;
      return undefined;
    }
    const held = this.held.length;
    const signed = indices(this.signatureReads);
    const pool = signed.length > 0 ? signed : indices(this.reads);
    if (pool.length === 0) return 'unread';
    const pick = (i: number, basis: DecisionBasis, candidates?: PresetName[]) => ({
      preset: (this.candidates[i] as Candidate).preset,
      evidence: { basis, signature: [...(this.signatureKeys[i] as Set<string>)], header: undefined, held, ...(candidates === undefined ? {} : { candidates }) },
    });
    if (pool.length === 1) return pick(pool[0] as number, signed.length > 0 ? 'signature' : 'latency');
    // Several structures, but each line shows one (a stream carrying two gateways' probes, stdin after a
    // rotation): each line is read by its own (readerOf), and the stream goes on as its latest line's.
    if (signed.length > 1 && this.heldSigned.every((m) => (m & (m - 1)) === 0)) {
      const last = [...this.heldSigned].reverse().find((m) => m !== 0) as number;
      return pick(31 - Math.clz32(last), 'signature');
    }
    const prev = pool.find((i) => this.candidates[i]?.preset === previous);
    if (prev !== undefined) return pick(prev, 'previous');
    const counts = signed.length > 0 ? this.signatureReads : this.reads;
    let best = pool[0] as number;
    for (const i of pool) if ((counts[i] as number) > (counts[best] as number)) best = i;
    return pick(
      best,
      'ambiguous',
      pool.map((i) => (this.candidates[i] as Candidate).preset),
    );
  }

  /**
   * The candidate that reads held line `i` when the stream is decided as `chosen`: `chosen`, unless the
   * line shows exactly one other preset's structure and not the chosen one's (another gateway's probe held
   * before this stream's first decisive line): then that one, so each part is read with its own preset.
   */
  readerOf(i: number, chosen: PresetName): Candidate {
    const c = this.candidates.findIndex((x) => x.preset === chosen);
    const m = this.heldSigned[i] ?? 0;
    if (m === 0 || (m & (1 << c)) !== 0 || (m & (m - 1)) !== 0) return this.candidates[c] as Candidate;
    return this.candidates[31 - Math.clz32(m)] as Candidate;
  }

  /** The held lines, handed over and forgotten: the detector starts afresh. */
  take(): string[] {
    this.heldSigned.length = 0;
    const lines = this.held.splice(0);
    this.heldSince = undefined;
    this.heldBytes = 0;
    this.offered = 0;
    this.reads.fill(0);
    this.signatureReads.fill(0);
    for (const k of this.signatureKeys) k.clear();
    return lines;
  }
}

/** The indices of the non-zero counts. */
function indices(counts: readonly number[]): number[] {
  const out: number[] = [];
  counts.forEach((n, i) => {
    if (n > 0) out.push(i);
  });
  return out;
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
        obj = c.parser.hexEscapes ? parseApacheEscaped(line) : undefined;
        if (obj === undefined) continue;
      }
      if (c.parser.parseValue(obj).ok && c.parser.carriesHeaders(obj)) count++;
    }
    if (count > bestCount) [best, bestCount] = [c, count];
  }
  return bestCount > 0 && 2 * bestCount >= lines.length ? best : undefined;
}
