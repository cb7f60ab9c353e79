// How each source's lines are read: with the configured preset, or (input.preset: auto) with the one
// detected from its first lines (detect-preset.ts); and what those first lines showed (input-watch.ts),
// said once per source. The pipeline counts the lines; this module decides how to read them and when.
import type { Config } from '../config/schema.js';
import { bestReader, PresetDetector, type Candidate } from './detect-preset.js';
import { InputWatch, type Label, type WatchOutcome } from './input-watch.js';
import { mappingFor, PRESET_NAMES, type PresetName } from './presets.js';
import { RecordParser, type ParseResult } from './parse-record.js';
import { textLogFormat, type TextLogFormat } from './text-log-format.js';

/** What a source's first lines showed: its preset, and what did not read right (said once per source). */
export interface InputEvents {
  /** The preset a source is read with: `detected` from its first lines, or `configured` (input.preset). */
  decided?(source: string, preset: PresetName, how: 'detected' | 'configured'): void;
  /** Most of the first lines were skipped. */
  notUnderstood?(source: string, hint: InputHint): void;
  /** A label's path never held a value in the first records: the label stays empty. */
  labelUnresolved?(source: string, label: Label, path: string, records: number): void;
}

export interface InputHint {
  /** The preset the lines were read with; undefined while none reads them. */
  preset: PresetName | undefined;
  lines: number;
  skipped: number;
  /** The most frequent skip reasons, most frequent first. */
  reasons: [string, number][];
  /** Another preset that reads most of the skipped lines. */
  suggestion: PresetName | undefined;
  /** When no preset does: the gateway's text log format they are in, if one we know. */
  textFormat: TextLogFormat | undefined;
}

/** A source with lines held while its format is detected is decided after this long (serve: a quiet log). */
export const DETECT_WAIT_MS = 2_000;
/** A source's watch of its first lines says what it found after this long, if not after WATCH_LINES lines. */
export const WATCH_MS = 10_000;

/** How one source is read. The line path reads `parser` and `watch` directly: undefined means "ask SourceInputs". */
export interface SourceInput {
  readonly name: string;
  /** The parser of its preset; undefined while the format is being detected. */
  parser: RecordParser | undefined;
  preset: PresetName | undefined;
  detector: PresetDetector | undefined;
  /** Its first lines, until what they showed is said. */
  watch: InputWatch | undefined;
  /** The watch's outcomes, kept after it ends (keepWatchOutcomes). */
  outcomes: WatchOutcome[] | undefined;
}

/** The header names (any case) the signals read, so the parsers extract only these. */
export interface WantedHeaders {
  responseHeaderNames: readonly string[];
  requestHeaderNames: readonly string[];
}

/** The record parser of one preset with the config's overrides. */
export function candidateFor(config: Config, wanted: WantedHeaders, preset: PresetName): Candidate {
  const mapping = mappingFor(config.input, preset);
  const parser = new RecordParser({
    mapping,
    latencyList: config.input.latencyList,
    maxLatencySeconds: config.input.maxLatency / 1000,
    absentValues: config.input.absentValues,
    responseHeaderNames: wanted.responseHeaderNames,
    requestHeaderNames: wanted.requestHeaderNames,
  });
  return { preset, mapping, parser };
}

/** A reader for every preset, in detection order: what input.preset: auto chooses from. */
export function presetCandidates(config: Config, wanted: WantedHeaders): Candidate[] {
  return PRESET_NAMES.map((p) => candidateFor(config, wanted, p));
}

export interface SourceInputsOptions<S extends SourceInput> {
  config: Config;
  wanted: WantedHeaders;
  clock: () => number;
  events?: InputEvents | undefined;
  /** Keep what each source's first lines showed (the worker thread of `report`, see outcomes()). */
  keepWatchOutcomes?: boolean | undefined;
  /** Counts one line of `source`, read with its preset (the pipeline's records and parse errors). */
  count(source: S, parsed: ParseResult): void;
}

/** The sources of one pipeline, `S` being its own per-source state with the input part mixed in. */
export class SourceInputs<S extends SourceInput> {
  private readonly all: S[] = [];
  /** The configured preset's reader; undefined with input.preset: auto. */
  private readonly configured: Candidate | undefined;
  /** Every preset's reader, made when first needed (detection, or a hint for a source not understood). */
  private candidateList: Candidate[] | undefined;
  private readonly events: InputEvents;

  constructor(private readonly opts: SourceInputsOptions<S>) {
    const preset = opts.config.input.preset;
    this.configured = preset === 'auto' ? undefined : candidateFor(opts.config, opts.wanted, preset);
    this.events = opts.events ?? {};
  }

  /** A new source: `rest` is the caller's part of its state. A configured preset is its preset at once. */
  create(name: string, rest: Omit<S, keyof SourceInput>): S {
    const watch = new InputWatch(this.opts.clock(), this.opts.keepWatchOutcomes);
    const input: SourceInput = {
      name,
      parser: undefined,
      preset: undefined,
      detector: this.configured === undefined ? new PresetDetector(this.candidates()) : undefined,
      watch,
      outcomes: watch.outcomes,
    };
    const s = { ...rest, ...input } as S;
    this.all.push(s);
    if (this.configured !== undefined) this.decide(s, this.configured.preset, 'configured');
    return s;
  }

  /** A line of a source whose format is not decided yet (`s.parser` undefined). */
  detect(s: S, text: string): void {
    const d = s.detector as PresetDetector;
    const offer = d.offer(text, this.opts.clock());
    if (offer.kind === 'decided') {
      this.decide(s, offer.preset, 'detected');
      this.read(s, text);
      return;
    }
    if (offer.kind === 'agreed') {
      if (s.watch !== undefined) this.seen(s, offer.result, text);
      this.opts.count(s, offer.result);
    }
    if (s.detector !== undefined && d.full()) this.decide(s, d.choose(), 'detected');
  }

  /** A counted line of a source still watched (`s.watch` defined); `text` only for a skipped one. */
  seen(s: S, parsed: ParseResult, text: string | undefined): void {
    if ((s.watch as InputWatch).see(parsed, text)) this.endWatch(s);
  }

  /** A line over input.maxLineBytes, counted by the caller. */
  oversize(s: S): void {
    if (s.watch?.oversize()) this.endWatch(s);
  }

  /** The source delivered what it has for now (an ingest body ended): its held lines are counted. */
  drain(s: S): void {
    if (s.detector !== undefined && s.detector.held.length > 0) this.decide(s, s.detector.choose(), 'detected');
  }

  /** Timed decisions (serve): held lines that waited DETECT_WAIT_MS, watches running for WATCH_MS. */
  settle(): void {
    const now = this.opts.clock();
    for (const s of this.all) {
      const d = s.detector;
      if (d?.heldSince !== undefined && now - d.heldSince >= DETECT_WAIT_MS) this.decide(s, d.choose(), 'detected');
      if (s.watch !== undefined && s.watch.lines > 0 && now - s.watch.startedAt >= WATCH_MS) this.endWatch(s);
    }
  }

  /** The end of the input (report): every held line is counted, every watch says what it found. */
  finish(): void {
    for (const s of this.all) {
      this.drain(s);
      this.endWatch(s);
    }
  }

  /** Reads `s` with `preset` from its next line, as if detected (report detects a split file up front). */
  useDetected(s: S, preset: PresetName): void {
    if (s.parser === undefined) this.decide(s, preset, 'detected');
  }

  /** Each source's preset (null: not decided, no line was read by any). */
  presets(): Record<string, PresetName | null> {
    return Object.fromEntries(this.all.map((s) => [s.name, s.preset ?? null]));
  }

  /** Per source, what its first lines showed (kept with keepWatchOutcomes). */
  outcomes(): [string, WatchOutcome[]][] {
    return this.all.flatMap((s): [string, WatchOutcome[]][] => (s.outcomes === undefined ? [] : [[s.name, s.outcomes]]));
  }

  /** Lines read after this source's (by another pipeline) continue its watch, if it is still open. */
  continueWatch(s: S, outcomes: readonly WatchOutcome[]): void {
    for (const o of outcomes) {
      if (s.watch === undefined) return;
      if (s.watch.apply(o)) this.endWatch(s);
    }
  }

  /** A line of `s`, read with its preset. */
  private read(s: S, text: string): void {
    const parsed = (s.parser as RecordParser).parse(text);
    if (s.watch !== undefined) this.seen(s, parsed, text);
    this.opts.count(s, parsed);
  }

  /** From now on `s` is read with `preset`; its held lines are counted first, in their order. */
  private decide(s: S, preset: PresetName, how: 'detected' | 'configured'): void {
    const held = s.detector?.held ?? [];
    s.parser = this.candidate(preset).parser;
    s.preset = preset;
    s.detector = undefined;
    this.events.decided?.(s.name, preset, how);
    for (const text of held) this.read(s, text);
  }

  private candidates(): Candidate[] {
    return (this.candidateList ??= presetCandidates(this.opts.config, this.opts.wanted));
  }

  private candidate(preset: PresetName): Candidate {
    const c = this.configured?.preset === preset ? this.configured : this.candidates().find((x) => x.preset === preset);
    if (c === undefined) throw new Error(`no reader for preset ${preset}`);
    return c;
  }

  /** Says what the first lines of `s` showed, once. */
  private endWatch(s: S): void {
    const w = s.watch;
    if (w === undefined) return;
    s.watch = undefined;
    if (w.notUnderstood()) {
      const suggestion = bestReader(this.candidates().filter((c) => c.preset !== s.preset), w.samples)?.preset;
      this.events.notUnderstood?.(s.name, {
        preset: s.preset,
        lines: w.lines,
        skipped: w.skipped,
        reasons: w.topReasons(),
        suggestion,
        textFormat: suggestion === undefined ? textLogFormat(w.samples) : undefined,
      });
    }
    if (s.preset === undefined) return;
    const mapping = this.candidate(s.preset).mapping;
    for (const label of w.unresolved()) this.events.labelUnresolved?.(s.name, label, mapping[label], w.records);
  }
}
