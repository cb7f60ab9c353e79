// How each source's lines are read: with the configured preset, or (input.preset: auto) with the one
// detected, per stream (each followed file's generation, each ingest body, stdin), from its first lines
// (detect-preset.ts); and what a source's first lines showed (input-watch.ts), said once per source. The
// pipeline counts the lines; this module decides how to read them and when.
import { bestReader, PresetDetector, type Candidate, type DecisionBasis, type Evidence } from './detect-preset.js';
import type { Stream } from '../source/line-sink.js';
import { headersHint, type HeadersHint } from './headers-hint.js';
import { InputWatch, type HeaderWatchState, type Label, type WatchOutcome } from './input-watch.js';
import { mappingFor, PRESET_NAMES, SIGNATURE_TOKENS, type RecordConfig, type PresetName } from './presets.js';
import { RecordParser, type ParseResult } from './parse-record.js';
import { textLogFormat, type TextLogFormat } from './text-log-format.js';

/** What a source's first lines showed: its preset, and what did not read right (said once per source). */
export interface InputEvents {
  /**
   * The preset a stream of `source` is read with: `detected` from its first lines, or `configured`
   * (input.preset). Said for a source's first stream, when a stream's decision differs from the one before
   * along its lineage (a file rotated into another format), and for every decision not made on evidence.
   */
  decided?(source: string, preset: PresetName, how: 'detected' | 'configured', detail?: DecisionDetail): void;
  /** Most of the first lines were skipped. */
  notUnderstood?(source: string, hint: InputHint): void;
  /** A label's path never held a value in the first records: the label stays empty. */
  labelUnresolved?(source: string, label: Label, path: string, records: number): void;
  /** None of the first records (input.headerWatch) carried a wanted response header field where the preset keeps them. */
  headersUnseen?(source: string, hint: HeadersHint): void;
  /** The first record that carried one, after `records` that did not (`warned`: headersUnseen was said). */
  headersSeen?(source: string, records: number, warned: boolean): void;
}

export type { HeadersHint };

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

/** What a decision rested on, and where. */
export interface DecisionDetail extends Evidence {
  /** The file it was made for, "" for an ingest body or stdin. */
  path: string;
  /** The preset the stream before along the lineage was read with, if any and different. */
  previous: PresetName | undefined;
}

/** A source with lines held while its format is detected is decided after this long (serve: a quiet log). */
export const DETECT_WAIT_MS = 2_000;
/** A source's watch of its first lines says what it found after this long, if not after WATCH_LINES lines. */
export const WATCH_MS = 10_000;

/** How one stream of a source is read. The line path reads `parser` and `watch` directly: undefined means "ask SourceInputs". */
export interface SourceInput {
  /** The source: the metric label. */
  readonly name: string;
  /** The stream (detection key): the name itself for a source that is one stream. */
  key: string;
  readonly lineage: string;
  readonly path: string;
  /** The parser of its preset; undefined while the format is being detected. */
  parser: RecordParser | undefined;
  preset: PresetName | undefined;
  detector: PresetDetector | undefined;
  /**
   * With input.preset: auto, once decided: its preset's SIGNATURE_TOKENS as bytes. A line without a
   * wanted header and without any of them is looked at again (recheck); undefined: never.
   */
  tokens: readonly Buffer[] | undefined;
  /** The source's first lines, until what they showed is said (one watch per source, shared by its streams). */
  watch: InputWatch | undefined;
  /** The watch's outcomes, kept after it ends (keepWatchOutcomes). */
  outcomes: WatchOutcome[] | undefined;
}

/** Lines a stream held back while detecting, saved with a checkpoint and offered again after a restart. */
export interface HeldLines {
  source: string;
  lineage: string;
  path: string;
  lines: string[];
}

/** Streams kept at most: past this the oldest are drained (held lines counted) and forgotten. */
export const MAX_STREAMS = 4096;
/** Held lines saved with one checkpoint at most (bytes of text): the streams past it are decided first. */
export const MAX_CHECKPOINT_HELD_BYTES = 8 * 1024 * 1024;

/** The header names (any case) the signals read, so the parsers extract only these. */
export interface WantedHeaders {
  responseHeaderNames: readonly string[];
  requestHeaderNames: readonly string[];
}

/** The record parser of one preset with the config's overrides. */
export function candidateFor(config: RecordConfig, wanted: WantedHeaders, preset: PresetName): Candidate {
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
export function presetCandidates(config: RecordConfig, wanted: WantedHeaders): Candidate[] {
  return PRESET_NAMES.map((p) => candidateFor(config, wanted, p));
}

export interface SourceInputsOptions<S extends SourceInput> {
  config: RecordConfig;
  wanted: WantedHeaders;
  clock: () => number;
  events?: InputEvents | undefined;
  /** Keep what each source's first lines showed (the worker thread of `report`, see outcomes()). */
  keepWatchOutcomes?: boolean | undefined;
  /** Counts one line of `source`, read with its preset (the pipeline's records and parse errors). */
  count(source: S, parsed: ParseResult): void;
  /** `preset` is now (true) or no longer (false) in use by a stream of `source`: input_info. */
  inUse?(source: string, preset: PresetName, on: boolean): void;
  /** A stream of `source` was decided on `basis` (zero_plane_exporter_input_decisions_total). */
  decision?(source: string, basis: DecisionBasis): void;
}

/** One source: its watch, and its streams with the presets they are read with. */
interface Group<S> {
  readonly name: string;
  watch: InputWatch | undefined;
  readonly outcomes: WatchOutcome[] | undefined;
  readonly streams: Set<S>;
  /** Streams per preset; `last`, the latest decision, stays in use after its stream ends (an ingest body). */
  readonly inUse: Map<PresetName, number>;
  last: PresetName | undefined;
}

/** The streams of one pipeline, `S` being its own per-stream state with the input part mixed in. */
export class SourceInputs<S extends SourceInput> {
  /** By stream key (the source's name for a source that is one stream). */
  readonly streams = new Map<string, S>();
  private readonly groups = new Map<string, Group<S>>();
  /** Streams whose format is not decided yet (settle() looks only at these). */
  private readonly detecting = new Set<S>();
  /** The latest decision along each lineage (bounded like the streams). */
  private readonly lineagePreset = new Map<string, PresetName>();
  /** Streams made of a checkpoint's held lines, by lineage: the first new stream of it takes them over. */
  private readonly restored = new Map<string, S>();
  /** The configured preset's reader; undefined with input.preset: auto. */
  private readonly configured: Candidate | undefined;
  /** Every preset's reader, made when first needed (detection, or a hint for a source not understood). */
  private candidateList: Candidate[] | undefined;
  private readonly events: InputEvents;
  /** Each source's watch, kept after it ends with keepWatchOutcomes (headerStates()). */
  private readonly kept = new Map<string, InputWatch>();
  /** Sources said to carry no header (headersUnseen), by name. */
  private readonly hints = new Map<string, HeadersHint & { seenAfter: number | null }>();

  constructor(private readonly opts: SourceInputsOptions<S>) {
    const preset = opts.config.input.preset;
    this.configured = preset === 'auto' ? undefined : candidateFor(opts.config, opts.wanted, preset);
    this.events = opts.events ?? {};
  }

  /**
   * A new stream of source `name` (`stream` undefined: the source is one stream); `rest` is the caller's
   * part of its state. A configured preset is its preset at once. A stream restored from a checkpoint's
   * held lines of the same lineage, still undecided, becomes this one: its lines come first.
   */
  create(name: string, stream: Stream | undefined, rest: Omit<S, keyof SourceInput>): S {
    const key = stream?.key ?? name;
    const lineage = stream?.lineage ?? name;
    const adopt = this.restored.get(lineage);
    if (adopt !== undefined) {
      this.restored.delete(lineage);
      if (adopt.detector !== undefined && this.streams.get(adopt.key) === adopt && adopt.name === name) {
        this.streams.delete(adopt.key);
        adopt.key = key;
        this.streams.set(key, adopt);
        return adopt;
      }
    }
    const group = this.group(name);
    const input: SourceInput = {
      name,
      key,
      lineage,
      path: stream?.path ?? '',
      parser: undefined,
      preset: undefined,
      detector: this.configured === undefined ? new PresetDetector(this.candidates()) : undefined,
      tokens: undefined,
      watch: group.watch,
      outcomes: group.outcomes,
    };
    const s = { ...rest, ...input } as S;
    this.streams.set(key, s);
    group.streams.add(s);
    if (this.streams.size > MAX_STREAMS) {
      const oldest = this.streams.values().next().value as S;
      if (oldest !== s) this.release(oldest);
    }
    if (this.configured !== undefined) this.decide(s, this.configured.preset, { basis: 'configured', signature: [], header: undefined, held: 0 });
    else this.detecting.add(s);
    return s;
  }

  /** A line of a stream whose format is not decided yet (`s.parser` undefined). */
  detect(s: S, text: string): void {
    const d = s.detector as PresetDetector;
    const offer = d.offer(text, this.opts.clock());
    if (offer.kind === 'decided') {
      this.decide(s, offer.preset, offer.evidence);
      this.read(s, text);
      return;
    }
    if (offer.kind === 'agreed') {
      if (s.watch !== undefined) this.seen(s, offer.result, text);
      this.opts.count(s, offer.result);
    }
    if (s.detector !== undefined && d.full()) this.decideHeld(s);
  }

  /** A counted line of a stream whose source is still watched (`s.watch` defined), as text. */
  seen(s: S, parsed: ParseResult, text: string): void {
    const w = s.watch as InputWatch;
    if (!w.linesDone && w.see(parsed, text)) this.endLines(s, w);
    if (parsed.ok && !w.headerSeen && s.parser !== undefined) this.headerRecord(s, w, s.parser.carriesResponseHeadersText(text), text);
    if (w.done()) this.endWatch(s);
  }

  /** seen() of a line read from bytes: its text is only made when the watch keeps it. */
  seenBytes(s: S, parsed: ParseResult, buf: Buffer, start: number, end: number): void {
    const w = s.watch as InputWatch;
    if (!w.linesDone && w.see(parsed, parsed.ok ? undefined : buf.toString('utf8', start, end))) this.endLines(s, w);
    if (parsed.ok && !w.headerSeen && s.parser !== undefined) {
      const carried = s.parser.carriesResponseHeadersBytes(buf, start, end);
      this.headerRecord(s, w, carried, !carried && w.wantsSample() ? buf.toString('utf8', start, end) : undefined);
    }
    if (w.done()) this.endWatch(s);
  }

  /** A line over input.maxLineBytes, counted by the caller. */
  oversize(s: S): void {
    const w = s.watch;
    if (w === undefined || w.linesDone) return;
    if (w.oversize()) this.endLines(s, w);
    if (w.done()) this.endWatch(s);
  }

  /** The stream delivered what it has for now (an ingest body ended): its held lines are counted. */
  drain(s: S): void {
    if (s.detector !== undefined && s.detector.held.length > 0) this.decideHeld(s);
  }

  /** The stream ended for good: its held lines are counted and it is forgotten (its preset stays in input_info while latest). */
  release(s: S): void {
    this.drain(s);
    if (this.streams.get(s.key) === s) this.streams.delete(s.key);
    this.detecting.delete(s);
    if (this.restored.get(s.lineage) === s) this.restored.delete(s.lineage);
    const group = this.groups.get(s.name);
    group?.streams.delete(s);
    if (group !== undefined && s.preset !== undefined) this.use(group, s.preset, -1);
  }

  /**
   * Timed decisions (serve): held lines that waited DETECT_WAIT_MS, watches running for WATCH_MS, and
   * header watches running for input.headerWatch.duration. Whether any was made.
   */
  settle(): boolean {
    const now = this.opts.clock();
    let acted = false;
    for (const s of [...this.detecting]) {
      const since = s.detector?.heldSince;
      if (since !== undefined && now - since >= DETECT_WAIT_MS) {
        this.decideHeld(s);
        acted = true;
      }
    }
    const headerMs = this.opts.config.input.headerWatch.duration;
    for (const g of this.groups.values()) {
      const w = g.watch;
      const any = g.streams.values().next().value;
      if (w === undefined || any === undefined) continue;
      if (!w.linesDone && w.lines > 0 && now - w.startedAt >= WATCH_MS) {
        this.endLines(any, w);
        acted = true;
      }
      if (!w.headerSeen && !w.headersWarned && w.headerless > 0 && now - w.startedAt >= headerMs) {
        this.warnHeaders(any, w);
        acted = true;
      }
      if (w.done()) {
        this.endWatch(any);
        acted = true;
      }
    }
    return acted;
  }

  /**
   * The end of the input (report): every held line is counted, every watch says what it found, and a source
   * of fewer records than input.headerWatch.records none of which carried a header says so too.
   */
  finish(): void {
    for (const s of [...this.streams.values()]) this.drain(s);
    for (const g of this.groups.values()) {
      const w = g.watch;
      const any = g.streams.values().next().value;
      if (w === undefined || any === undefined) continue;
      if (!w.linesDone) this.endLines(any, w);
      if (!w.headerSeen && !w.headersWarned && w.headerless > 0) this.warnHeaders(any, w);
    }
  }

  /**
   * Sources with records of which not one carried a wanted response header field (so far: a watch still
   * open), with their record counts. Exact over everything read: a source stays watched until a header shows up.
   */
  headersNeverSeen(): [string, number][] {
    return [...this.groups.values()].flatMap((g): [string, number][] => (g.watch !== undefined && !g.watch.headerSeen && g.watch.headerless > 0 ? [[g.name, g.watch.headerless]] : []));
  }

  /** What each source said about its headers: the hint of headersUnseen, and whether one showed up later (seenAfter). */
  headerHints(): [string, HeadersHint & { seenAfter: number | null }][] {
    return [...this.hints];
  }

  /** Reads `s` with `preset` from its next line, as if detected (report detects a split file up front). */
  useDetected(s: S, preset: PresetName, evidence?: Evidence): void {
    if (s.parser === undefined) this.decide(s, preset, evidence ?? { basis: 'given', signature: [], header: undefined, held: s.detector?.held.length ?? 0 });
  }

  /** Each source's preset (null: not decided, no line was read by any); with several streams, the latest decided. */
  presets(): Record<string, PresetName | null> {
    const out: Record<string, PresetName | null> = {};
    for (const g of this.groups.values()) out[g.name] = g.last ?? null;
    return out;
  }

  /** Per source, what its first lines showed (kept with keepWatchOutcomes). */
  outcomes(): [string, WatchOutcome[]][] {
    return [...this.groups.values()].flatMap((g): [string, WatchOutcome[]][] => (g.outcomes === undefined ? [] : [[g.name, g.outcomes]]));
  }

  /** Per source, its header watch as plain data (the worker thread of `report`, see continueWatch()). */
  headerStates(): [string, HeaderWatchState][] {
    return [...this.kept].map(([name, w]): [string, HeaderWatchState] => [name, { headerless: w.headerless, seen: w.headerSeen, samples: w.recordSamples }]);
  }

  /**
   * Lines read after this source's (by another pipeline) continue its watch, if it is still open: the first
   * lines' outcomes, and `headers`, the other pipeline's header watch from its first record.
   */
  continueWatch(s: S, outcomes: readonly WatchOutcome[], headers?: HeaderWatchState): void {
    const w = s.watch;
    if (w === undefined) return;
    for (const o of outcomes) if (!w.linesDone && w.apply(o)) this.endLines(s, w);
    if (headers !== undefined && !w.headerSeen) {
      for (const text of headers.samples) if (w.wantsSample()) w.recordSamples.push(text);
      this.headerRecords(s, w, headers.headerless);
      if (headers.seen) this.headerRecord(s, w, true, undefined);
    }
    if (w.done()) this.endWatch(s);
  }

  /**
   * The lines held now, for a checkpoint (whose offsets are past them and whose counters are without
   * them). Past `maxBytes` of them, the remaining streams are decided first, so what the checkpoint
   * holds stays bounded and still agrees: those lines are in its counters instead.
   */
  held(maxBytes = MAX_CHECKPOINT_HELD_BYTES): HeldLines[] {
    const out: HeldLines[] = [];
    let bytes = 0;
    for (const s of [...this.detecting]) {
      const lines = s.detector?.held ?? [];
      if (lines.length === 0) continue;
      const size = lines.reduce((n, l) => n + l.length, 0);
      if (bytes + size > maxBytes) {
        this.decideHeld(s);
        continue;
      }
      bytes += size;
      out.push({ source: s.name, lineage: s.lineage, path: s.path, lines: [...lines] });
    }
    return out;
  }

  /**
   * A line of a decided stream with no wanted header and none of its preset's signature keys (a probe of
   * another gateway's log: the file was rotated into another format, stdin carries another file): the
   * stream detects again from this line, its decision so far being the `previous` one.
   */
  recheck(s: S, text: string): void {
    const group = this.group(s.name);
    const before = s.preset;
    const [parser, tokens] = [s.parser, s.tokens];
    if (before !== undefined && group.streams.has(s)) this.use(group, before, -1);
    s.parser = undefined;
    s.preset = undefined;
    s.tokens = undefined;
    const d = (s.detector = new PresetDetector(this.candidates()));
    this.detecting.add(s);
    this.detect(s, text);
    if (s.detector === d && d.held.length === 0 && before !== undefined) {
      // Every preset skips it alike (garbage): counted, and the stream keeps its preset.
      [s.parser, s.preset, s.tokens, s.detector] = [parser, before, tokens, undefined];
      this.detecting.delete(s);
      if (group.streams.has(s)) this.use(group, before, 1);
    }
  }

  /** `s` was made of a checkpoint's held lines: the next new stream of its lineage takes it over. */
  restoredStream(s: S): void {
    if (s.detector !== undefined) this.restored.set(s.lineage, s);
  }

  /** One record of `s` for the open header part of its source's watch. */
  private headerRecord(s: S, w: InputWatch, carried: boolean, text: string | undefined): void {
    w.headerRecord(carried, text);
    if (carried) {
      const hint = this.hints.get(s.name);
      if (hint !== undefined) hint.seenAfter = w.headerless;
      this.events.headersSeen?.(s.name, w.headerless, w.headersWarned);
    } else if (!w.headersWarned && w.headerless >= this.opts.config.input.headerWatch.records) {
      this.warnHeaders(s, w);
    }
  }

  /** `n` records without a header, read by another pipeline: the bound is crossed as if they were read here. */
  private headerRecords(s: S, w: InputWatch, n: number): void {
    const bound = this.opts.config.input.headerWatch.records;
    const before = w.headerless;
    if (!w.headersWarned && before < bound && before + n >= bound) {
      // Said at the bound's record, as one pass would have.
      w.headerless = bound;
      this.warnHeaders(s, w);
    }
    w.headerless = before + n;
  }

  /** Says that none of the first records of the source of `s` carried a wanted response header field, once. */
  private warnHeaders(s: S, w: InputWatch): void {
    w.headersWarned = true;
    const preset = s.preset ?? this.group(s.name).last;
    if (preset === undefined) return;
    const hint: HeadersHint & { seenAfter: number | null } = {
      ...headersHint(this.opts.config, this.opts.wanted, preset, this.candidates(), w.recordSamples, w.headerless),
      seenAfter: null,
    };
    this.hints.set(s.name, hint);
    this.events.headersUnseen?.(s.name, hint);
  }

  /** A line of `s`, read with its preset. */
  private read(s: S, text: string): void {
    const parsed = (s.parser as RecordParser).parse(text);
    if (s.watch !== undefined) this.seen(s, parsed, text);
    this.opts.count(s, parsed);
  }

  /** The held lines of `s` decide at a bound (detect-preset.ts decide()); nothing held, nothing decided. */
  private decideHeld(s: S): void {
    const d = s.detector as PresetDetector;
    const choice = d.decide(this.lineagePreset.get(s.lineage));
    if (choice === 'unread') {
      // No preset reads them: counted as the first candidate skips them, and the stream keeps detecting.
      const parser = (this.candidates()[0] as Candidate).parser;
      for (const text of d.take()) {
        const parsed = parser.parse(text);
        if (s.watch !== undefined) this.seen(s, parsed, text);
        this.opts.count(s, parsed);
      }
    } else if (choice !== undefined) this.decide(s, choice.preset, choice.evidence);
  }

  /** From now on `s` is read with `preset`; its held lines are counted first, in their order. */
  private decide(s: S, preset: PresetName, evidence: Evidence): void {
    const detector = s.detector;
    const held = detector?.held ?? [];
    s.parser = this.candidate(preset).parser;
    s.preset = preset;
    s.detector = undefined;
    s.tokens = this.configured === undefined ? tokenBytes(preset) : undefined;
    this.detecting.delete(s);
    const previous = this.lineagePreset.get(s.lineage);
    this.lineagePreset.delete(s.lineage);
    this.lineagePreset.set(s.lineage, preset);
    if (this.lineagePreset.size > MAX_STREAMS) this.lineagePreset.delete(this.lineagePreset.keys().next().value as string);
    const group = this.group(s.name);
    if (group.streams.has(s)) this.use(group, preset, 1);
    this.opts.decision?.(s.name, evidence.basis);
    const sure = evidence.basis === 'evidence' || evidence.basis === 'previous' || evidence.basis === 'configured' || evidence.basis === 'given';
    if (previous !== preset || !sure) {
      const how = evidence.basis === 'configured' ? 'configured' : 'detected';
      this.events.decided?.(s.name, preset, how, { ...evidence, path: s.path, previous: previous === preset ? undefined : previous });
    }
    held.forEach((text, i) => {
      const reader = detector?.readerOf(i, preset);
      if (reader === undefined || reader.preset === preset) this.read(s, text);
      else {
        const parsed = reader.parser.parse(text);
        if (s.watch !== undefined) this.seen(s, parsed, text);
        this.opts.count(s, parsed);
      }
    });
  }

  /** Counts a stream of `group` starting (1) or ending (-1) being read with `preset`, for input_info. */
  private use(group: Group<S>, preset: PresetName, delta: 1 | -1): void {
    const before = group.inUse.get(preset) ?? 0;
    const after = Math.max(0, before + delta);
    group.inUse.set(preset, after);
    const inUse = this.opts.inUse;
    if (delta === 1) {
      const last = group.last;
      group.last = preset;
      if (before === 0) inUse?.(group.name, preset, true);
      if (last !== undefined && last !== preset && (group.inUse.get(last) ?? 0) === 0) inUse?.(group.name, last, false);
    } else if (after === 0 && preset !== group.last) {
      inUse?.(group.name, preset, false);
    }
  }

  private group(name: string): Group<S> {
    let g = this.groups.get(name);
    if (g === undefined) {
      const watch = new InputWatch(this.opts.clock(), this.opts.keepWatchOutcomes);
      if (this.opts.keepWatchOutcomes === true) this.kept.set(name, watch);
      g = { name, watch, outcomes: watch.outcomes, streams: new Set(), inUse: new Map(), last: undefined };
      this.groups.set(name, g);
    }
    return g;
  }

  private candidates(): Candidate[] {
    return (this.candidateList ??= presetCandidates(this.opts.config, this.opts.wanted));
  }

  private candidate(preset: PresetName): Candidate {
    const c = this.configured?.preset === preset ? this.configured : this.candidates().find((x) => x.preset === preset);
    if (c === undefined) throw new Error(`no reader for preset ${preset}`);
    return c;
  }

  /** Both parts of the watch of the source of `s` are over: it is gone from all its streams. */
  private endWatch(s: S): void {
    const group = this.group(s.name);
    group.watch = undefined;
    for (const x of group.streams) x.watch = undefined;
    s.watch = undefined;
  }

  /** Says what the first lines of the source of `s` showed, once (the lines part of its watch). */
  private endLines(s: S, w: InputWatch): void {
    w.linesDone = true;
    if (w.notUnderstood()) {
      const suggestion = bestReader(
        this.candidates().filter((c) => c.preset !== s.preset),
        w.samples,
      )?.preset;
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

const TOKENS = new Map<PresetName, readonly Buffer[]>();

function tokenBytes(preset: PresetName): readonly Buffer[] {
  let t = TOKENS.get(preset);
  if (t === undefined) TOKENS.set(preset, (t = SIGNATURE_TOKENS[preset].map((k) => Buffer.from(k))));
  return t;
}

/** A record without any wanted header (a probe, a request that never reached a Zero-Plane upstream). */
export function headerless(parsed: ParseResult): boolean {
  if (!parsed.ok) return parsed.reason === 'missing_latency';
  const r = parsed.record;
  for (const _ in r.responseHeaders) return false;
  if (r.requestHeaders !== undefined) for (const _ in r.requestHeaders) return false;
  return true;
}

/** Whether buf[start, end) holds none of `tokens`. */
export function lacksTokens(buf: Buffer, start: number, end: number, tokens: readonly Buffer[]): boolean {
  const line = buf.subarray(start, end);
  for (const t of tokens) if (line.indexOf(t) !== -1) return false;
  return true;
}
