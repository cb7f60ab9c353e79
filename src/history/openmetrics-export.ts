// `export --format openmetrics`: the exporter's counters and histograms as a scrape would have taken them
// at every step of a replayed log, with timestamps, for `promtool tsdb create-blocks-from openmetrics`.
//
// Exactness in Prometheus 2.42: rate() and increase() extrapolate unless the samples cover the range, and
// a series whose first sample is already 1 loses that first increase. So every counter and histogram
// series is written from the first step of the timeline at 0 (a series created later is 0 until then),
// at every step after, with the step dividing the rule windows: then a window ending on a step has a
// sample at both ends (or starts at a 0 sample), the extrapolation factor is 1, and increase() is the
// exact count of records in it. Gauges are written from the step they exist.
//
// OpenMetrics wants each series' samples together (series are not interleaved), but a replay produces one
// step of every series at a time. Steps are collected per 2 h block (Prometheus' block size): with --out,
// each block is written as its own file, which promtool turns into one block reading it once; on stdout,
// blocks go to a temporary file first and are read back series by series at the end. Memory: one block.
import { closeSync, constants, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../config/schema.js';
import { SafeFileWriter } from '../fs/safe-write.js';
import type { InputEvents } from '../record/source-inputs.js';
import { labelText } from '../metrics/exposition.js';
import { HistogramFamily, type GaugeFamily, type CounterFamily } from '../metrics/families.js';
import { canonicalNumber, OPENMETRICS_EOF, openMetricsFamilyName, openMetricsHeader, openMetricsValue } from '../metrics/openmetrics.js';
import { buildInfoFamily } from '../metrics/registry.js';
import { WindowGauges } from '../metrics/window-gauges.js';
import type { Pipeline } from '../pipeline.js';
import { replay, type ReplaySummary } from './replay.js';
import { BLOCK_MS, ScratchTooLarge } from './timeline-bounds.js';
import { breather } from './yield-often.js';

export interface ExportOptions {
  stepMs: number;
  nowMs: number;
  /** Target labels on every series, in order (job, instance, …). */
  labels: readonly (readonly [string, string])[];
  /** Where the text goes: one exposition to `write`, or one file per block in `dir`. */
  to: { write(text: string): void | Promise<void> } | { dir: string };
  version: string;
  /** Told what the first lines of each input showed. */
  input?: InputEvents;
  /** Aborted, the replay stops (rejecting with its reason, within 1 s) and the scratch file is removed. */
  interrupt?: AbortSignal;
  /** Blocks (2 h each, a file each with `dir`) the timeline may span at most: a longer one throws TimelineTooLong. */
  maxBlocks?: number;
  /** Bytes the scratch file (stdout only) may take at most: more throws ScratchTooLarge before it is written. */
  maxScratchBytes?: number;
}

export interface ExportResult {
  summary: ReplaySummary;
  /** Samples written (lines with a value). */
  samples: number;
  /** The files written with `dir`, in time order. */
  files: string[];
}

type Family = CounterFamily | GaugeFamily | HistogramFamily;

/** One family's columns in a block: per series (in creation order), its values at each step. */
interface FamilyColumns {
  family: Family;
  /** Values per step: 1, or a histogram's cumulative buckets, +Inf (the count), count and sum. */
  width: number;
  slots: Float64Array[];
}

interface Block {
  index: number;
  firstStepMs: number;
  steps: number;
  families: FamilyColumns[];
}

/** Label names a target label may not take: the exported families' own, and le. */
export function familyLabelNames(families: readonly Family[]): Set<string> {
  return new Set(['le', ...families.flatMap((f) => f.labelNames)]);
}

export async function exportOpenMetrics(config: Config, files: readonly string[], opts: ExportOptions): Promise<ExportResult> {
  const step = opts.stepMs;
  const capacity = Math.ceil(BLOCK_MS / step) + 1;
  let families: Family[] | undefined;
  let block: Block | undefined;
  let samples = 0;
  const written: string[] = [];
  const spill = 'dir' in opts.to ? undefined : new Spill(opts.maxScratchBytes ?? Infinity);
  const breathe = breather(opts.interrupt);
  const target = labelText(
    opts.labels.map(([k]) => k),
    opts.labels.map(([, v]) => v),
  );
  /** Per family, each series' sample names, made when a step first sees the series (series are never removed). */
  const names = new Map<Family, string[][]>();

  const newBlock = (index: number, firstStepMs: number): Block => ({
    index,
    firstStepMs,
    steps: 0,
    families: (families as Family[]).map((family) => ({ family, width: family instanceof HistogramFamily ? family.bounds.length + 3 : 1, slots: [] })),
  });
  /** Every series the family has now gets a slot (0s, or no values for a gauge, where it did not exist yet). */
  const pad = (b: Block) => {
    for (const fc of b.families) {
      let i = 0;
      for (const _ of fc.family.eachSeries()) if (i++ >= fc.slots.length) fc.slots.push(newSlot(fc, capacity));
    }
  };
  const finish = async (b: Block) => {
    if (spill !== undefined) {
      spill.add(b);
      return;
    }
    const dir = (opts.to as { dir: string }).dir;
    const path = join(dir, `${new Date(b.firstStepMs - (b.firstStepMs % BLOCK_MS)).toISOString().replace(/[:]/g, '').replace('.000Z', 'Z')}.om`);
    // Never through a link planted at the path, and never a truncated block left: see safe-write.ts.
    const fh = await SafeFileWriter.open(path);
    try {
      let out = '';
      for (const fc of b.families) {
        if (fc.slots.length === 0) continue;
        out += `${header(fc.family)}\n`;
        for (let i = 0; i < fc.slots.length; i++) {
          out += seriesText(fc, i, fc.slots[i] as Float64Array, b.firstStepMs, b.steps);
          if (out.length >= 1 << 20) {
            await fh.write(out);
            out = '';
            opts.interrupt?.throwIfAborted();
          }
        }
      }
      await fh.write(`${out}${OPENMETRICS_EOF}`);
      await fh.commit();
    } finally {
      await fh.abort();
    }
    written.push(path);
  };

  /** The lines of series `i` of a family over `steps` steps from `firstStepMs`; counts the samples. */
  const seriesText = (fc: FamilyColumns, i: number, slot: Float64Array, firstStepMs: number, steps: number): string => {
    const lines = names.get(fc.family)?.[i];
    if (lines === undefined) throw new Error(`${fc.family.name} has no series ${i}`);
    let out = '';
    for (let j = 0; j < steps; j++) {
      const at = j * fc.width;
      if (Number.isNaN(slot[at] as number)) continue; // a gauge that did not exist yet
      const ts = ` ${(firstStepMs + j * step) / 1000}\n`;
      for (let k = 0; k < lines.length; k++) out += `${lines[k] as string}${openMetricsValue(slot[at + k] as number)}${ts}`;
      samples += lines.length;
    }
    return out;
  };

  let summary: ReplaySummary;
  try {
    // On the rules' evaluation grid at both ends, so every evaluation inside the timeline has its sample.
    const maxSpanMs = opts.maxBlocks === undefined ? undefined : opts.maxBlocks * BLOCK_MS;
    // The scratch file the known span will take at least, at the bytes a step takes now (series only
    // grow): refused before it is written, not once it has filled the disk. Checked when the known end
    // moves and when a block begins.
    let span: [number, number] | undefined;
    const checkScratch = () => {
      if (spill === undefined || block === undefined || span === undefined) return;
      let perStep = 0;
      for (const fc of block.families) perStep += fc.slots.length * fc.width * 8;
      const projected = Math.ceil((span[1] - span[0]) / step) * perStep;
      if (projected > (opts.maxScratchBytes ?? Infinity)) throw new ScratchTooLarge(projected, opts.maxScratchBytes as number);
    };
    const onSpan = (firstMs: number, endMs: number) => {
      span = [firstMs, endMs];
      checkScratch();
    };
    const replayOptions = { stepMs: step, nowMs: opts.nowMs, alignMs: config.pack.evaluationInterval, input: opts.input, interrupt: opts.interrupt, maxSpanMs, onSpan };
    summary = await replay(config, files, replayOptions, async (timeMs, pipeline) => {
      families ??= exportedFamilies(config, pipeline, opts.version);
      const index = Math.floor(timeMs / BLOCK_MS);
      if (block !== undefined && block.index !== index) {
        const done = block;
        block = newBlock(index, timeMs);
        snapshot(block);
        pad(done);
        checkScratch();
        await finish(done);
      } else {
        const first = block === undefined;
        block ??= newBlock(index, timeMs);
        snapshot(block);
        if (first) checkScratch();
      }
    });
    if (block !== undefined) await finish(block);
    if (spill !== undefined && families !== undefined) {
      const write = (opts.to as { write(text: string): void | Promise<void> }).write;
      for (const [f, family] of families.entries()) {
        const series = spill.seriesCount(f);
        if (series === 0) continue;
        await write(`${header(family)}\n`);
        for (let i = 0; i < series; i++) {
          opts.interrupt?.throwIfAborted();
          const turn = breathe();
          if (turn !== undefined) await turn;
          for (const part of spill.parts(f, i)) {
            const fc = { family, width: part.width, slots: [] };
            const text = seriesText(fc, i, part.values ?? zeros(fc, part.steps), part.firstStepMs, part.steps);
            if (text !== '') await write(text);
          }
        }
      }
      await write(OPENMETRICS_EOF);
    } else if (spill !== undefined) {
      await (opts.to as { write(text: string): void | Promise<void> }).write(OPENMETRICS_EOF);
    }
  } catch (err) {
    // Refused or failed, the blocks already written are a part of a timeline: not left as if they were all of it.
    if (spill === undefined) for (const path of written) rmSync(path, { force: true });
    throw err;
  } finally {
    spill?.close();
  }
  return { summary, samples, files: written };

  function snapshot(b: Block): void {
    const j = b.steps++;
    for (const fc of b.families) {
      let i = 0;
      let known = names.get(fc.family);
      if (known === undefined) names.set(fc.family, (known = []));
      if (fc.family instanceof HistogramFamily) {
        const n = fc.family.bounds.length;
        for (const s of fc.family.eachSeries()) {
          if (i === known.length) known.push(sampleNamesOf(fc.family, s, target));
          const slot = fc.slots[i] ?? (fc.slots[i] = newSlot(fc, capacity));
          const at = j * fc.width;
          let acc = 0;
          for (let k = 0; k < n; k++) slot[at + k] = acc += s.counts[k] as number;
          slot[at + n] = s.count;
          slot[at + n + 1] = s.count;
          slot[at + n + 2] = s.sum;
          i++;
        }
      } else {
        for (const s of fc.family.eachSeries()) {
          if (i === known.length) known.push(sampleNamesOf(fc.family, s, target));
          const slot = fc.slots[i] ?? (fc.slots[i] = newSlot(fc, capacity));
          slot[j] = s.value;
          i++;
        }
      }
    }
  }
}

/** What an export writes: every family the pipeline feeds, its input info, the constants and the build info the dashboards read. */
export function exportedFamilies(config: Config, pipeline: Pipeline, version: string): Family[] {
  const constants = new WindowGauges(pipeline.window, config.signals);
  return [...pipeline.metrics.families(), pipeline.inputInfo, constants.baseline, constants.tolerance, buildInfoFamily(version)];
}

function newSlot(fc: FamilyColumns, capacity: number): Float64Array {
  const slot = new Float64Array(capacity * fc.width);
  // A gauge has no value before it exists; counters and histograms are 0 then.
  if (isGauge(fc.family)) slot.fill(Number.NaN);
  return slot;
}

function zeros(fc: FamilyColumns, steps: number): Float64Array {
  return new Float64Array(steps * fc.width).fill(isGauge(fc.family) ? Number.NaN : 0);
}

function isGauge(f: Family): boolean {
  return !(f instanceof HistogramFamily) && f.type === 'gauge';
}

function header(family: Family): string {
  const type = family instanceof HistogramFamily ? 'histogram' : family.type;
  return openMetricsHeader(openMetricsFamilyName(family.name, type), family.help, type);
}

/** The sample names with labels (and a trailing space) of one series, one per value of a step. */
function sampleNamesOf(f: Family, series: { labels: readonly string[] }, target: string): string[] {
  const labels = [target, labelText(f.labelNames, series.labels)].filter((x) => x !== '').join(',');
  if (f instanceof HistogramFamily) {
    const open = labels === '' ? '{' : `{${labels},`;
    const plain = labels === '' ? '' : `{${labels}}`;
    return [...f.bounds.map((b) => `${f.name}_bucket${open}le="${canonicalNumber(b)}"} `), `${f.name}_bucket${open}le="+Inf"} `, `${f.name}_count${plain} `, `${f.name}_sum${plain} `];
  }
  const braces = labels === '' ? '' : `{${labels}}`;
  return [f.type === 'counter' ? `${openMetricsFamilyName(f.name, 'counter')}_total${braces} ` : `${f.name}${braces} `];
}

/** Blocks written to a temporary file, read back series by series. */
class Spill {
  /** A directory of its own (mkdtemp: new, mode 0700), so the file in it is never one planted there. */
  private readonly dir = mkdtempSync(join(tmpdir(), 'zp-export-'));
  private readonly path = join(this.dir, 'blocks.f64');
  private readonly fd = openSync(this.path, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  private at = 0;
  private readonly blocks: { firstStepMs: number; steps: number; widths: number[]; slots: { offset: number }[][] }[] = [];

  constructor(private readonly maxBytes: number) {}

  add(b: Block): void {
    let bytes = 0;
    for (const fc of b.families) bytes += fc.slots.length * b.steps * fc.width * 8;
    if (this.at + bytes > this.maxBytes) throw new ScratchTooLarge(this.at + bytes, this.maxBytes);
    const slots = b.families.map((fc) =>
      fc.slots.map((slot) => {
        const bytes = b.steps * fc.width * 8;
        try {
          for (let done = 0; done < bytes;) done += writeSync(this.fd, slot, done, bytes - done, this.at + done);
        } catch (err) {
          throw new Error(`cannot write the scratch file ${this.path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
        }
        const offset = this.at;
        this.at += bytes;
        return { offset };
      }),
    );
    this.blocks.push({ firstStepMs: b.firstStepMs, steps: b.steps, widths: b.families.map((fc) => fc.width), slots });
  }

  seriesCount(family: number): number {
    return Math.max(0, ...this.blocks.map((b) => b.slots[family]?.length ?? 0));
  }

  /** Series `i` of a family block by block; `values` undefined in a block before the series existed. */
  *parts(family: number, i: number): Generator<{ firstStepMs: number; steps: number; width: number; values: Float64Array | undefined }> {
    for (const b of this.blocks) {
      const width = b.widths[family] as number;
      const slot = b.slots[family]?.[i];
      if (slot === undefined) {
        yield { firstStepMs: b.firstStepMs, steps: b.steps, width, values: undefined };
        continue;
      }
      const values = new Float64Array(b.steps * width);
      readSync(this.fd, values, 0, values.byteLength, slot.offset);
      yield { firstStepMs: b.firstStepMs, steps: b.steps, width, values };
    }
  }

  close(): void {
    closeSync(this.fd);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
