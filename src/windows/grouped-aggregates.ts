// One Aggregate per value of one record label (`report --by cohort|model|route`): the same counts, sketch
// and moments as the whole-input Aggregate, kept per group, so a group's figures are computed exactly as
// the whole input's are. The keys are the label values after the metrics' label limiter, so the groups
// are as bounded as the series (at most metrics.labelValueLimit values, then __other__).
import type { Signals } from '../signals/classify.js';
import { Aggregate, type AggregateState } from './aggregate.js';

/** The record labels `report --by` groups by. */
export const GROUP_LABELS = ['cohort', 'model', 'route'] as const;
export type GroupLabel = (typeof GROUP_LABELS)[number];

export function isGroupLabel(value: string): value is GroupLabel {
  return (GROUP_LABELS as readonly string[]).includes(value);
}

export class GroupedAggregates {
  private readonly groups = new Map<string, Aggregate>();

  constructor(
    readonly label: GroupLabel,
    private readonly relativeAccuracy: number,
  ) {}

  add(value: string, signals: Signals, latencySeconds: number): void {
    this.of(value).add(signals, latencySeconds);
  }

  /** Each group's value and aggregate, in the order the groups first appeared. */
  entries(): [string, Aggregate][] {
    return [...this.groups];
  }

  /** As plain data that crosses threads: [value, state] per group. */
  state(): [string, AggregateState][] {
    return [...this.groups].map(([value, agg]) => [value, agg.state()]);
  }

  /** Adds the groups of a pipeline that read the lines after this one's (exact: see Aggregate.mergeState). */
  mergeState(later: readonly [string, AggregateState][]): void {
    for (const [value, state] of later) this.of(value).mergeState(state);
  }

  private of(value: string): Aggregate {
    let agg = this.groups.get(value);
    if (agg === undefined) this.groups.set(value, (agg = new Aggregate(this.relativeAccuracy)));
    return agg;
  }
}
