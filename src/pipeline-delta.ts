// A serve pipeline's counts since it last handed them over, as plain data that crosses threads: a parse
// worker (cli/parse-worker.ts) takes them from its pipeline, the serving thread adds them to its own. Counts,
// not lines: the serving thread never parses.
import { mergeMetricsState, type MetricsState } from './metrics/metrics-state.js';
import { emptyMetricsState, MetricsDelta } from './metrics/metrics-delta.js';
import type { CounterFamily, GaugeFamily } from './metrics/families.js';
import type { Pipeline } from './pipeline.js';
import type { RepeatsState } from './windows/repeated-prompts.js';
import type { SlotState } from './windows/sliding-window.js';

export interface PipelineDelta {
  metrics: MetricsState;
  /** The window's slots that got records. */
  slots: SlotState[];
  /** The repeated prompts seen, when any were. */
  repeats?: RepeatsState;
  /** The input gauges' series that changed (input_info, headers_unseen, input_envelope_info): set as they are. */
  inputGauges: [family: string, labels: string[], value: number][];
  /** input_decisions_total's increments. */
  inputDecisions: [labels: string[], by: number][];
}

/** Takes deltas from one pipeline: every count goes into exactly one delta. */
export class PipelineDeltas {
  private readonly metrics: MetricsDelta;
  /** Per input gauge family, each series' value when last said, in series order (series are only appended). */
  private readonly gaugeSaid = new Map<string, number[]>();

  constructor(private readonly pipeline: Pipeline) {
    this.metrics = new MetricsDelta(pipeline.metrics);
  }

  /** See MetricsDelta.baseline: the checkpoint's counts, restored here only for the limits, are the serving thread's. */
  baseline(): void {
    this.metrics.baseline();
  }

  /** What was counted since the last take; undefined when nothing was. Lines parsed but not counted yet are counted first. */
  take(): PipelineDelta | undefined {
    const p = this.pipeline;
    p.chunkEnd();
    const metrics = this.metrics.take();
    const slots = p.window.drainSlots();
    let repeats: RepeatsState | undefined;
    if (p.repeats.requests > 0) {
      repeats = p.repeats.state();
      p.repeats.clear();
    }
    const inputGauges: PipelineDelta['inputGauges'] = [];
    for (const family of [p.inputInfo, p.headersUnseen, p.inputEnvelope]) {
      let said = this.gaugeSaid.get(family.name);
      if (said === undefined) this.gaugeSaid.set(family.name, (said = []));
      let i = 0;
      for (const s of family.eachSeries()) {
        if (said[i] !== s.value) {
          said[i] = s.value;
          inputGauges.push([family.name, [...s.labels], s.value]);
        }
        i++;
      }
    }
    const inputDecisions: PipelineDelta['inputDecisions'] = [];
    for (const s of p.inputDecisions.eachSeries()) {
      if (s.value === 0) continue;
      inputDecisions.push([[...s.labels], s.value]);
      s.value = 0;
    }
    if (emptyMetricsState(metrics) && slots.length === 0 && repeats === undefined && inputGauges.length === 0 && inputDecisions.length === 0) return undefined;
    return { metrics, slots, ...(repeats === undefined ? {} : { repeats }), inputGauges, inputDecisions };
  }
}

/** Adds a delta taken from another pipeline of the same config to `pipeline` (the serving thread's). */
export function mergeDelta(pipeline: Pipeline, delta: PipelineDelta): void {
  mergeMetricsState(pipeline.metrics, delta.metrics);
  pipeline.window.mergeSlots(delta.slots);
  if (delta.repeats !== undefined) pipeline.repeats.mergeState(delta.repeats);
  const gauges = new Map<string, GaugeFamily>([pipeline.inputInfo, pipeline.headersUnseen, pipeline.inputEnvelope].map((f) => [f.name, f]));
  for (const [name, labels, value] of delta.inputGauges) gauges.get(name)?.set(labels, value);
  const decisions: CounterFamily = pipeline.inputDecisions;
  for (const [labels, by] of delta.inputDecisions) decisions.inc(labels, by);
}
