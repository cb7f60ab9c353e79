// OTLP resource attributes → the target labels the pack aggregates by (ingest.otlp.resourceLabels): the
// records of each label set (k8s.cluster.name → cluster, k8s.namespace.name → namespace by default) count
// in a sink of their own, whose series /metrics writes with those labels (metrics/labelled-families.ts),
// so a Prometheus scraping with honor_labels keeps them instead of the exporter's own target labels
// (docs/otlp.md). Bounded: past maxSets label sets, a new one counts under __other__.
import { cutToBytes, OVERFLOW_VALUE } from '../metrics/label-limiter.js';

/** A label set: names in ingest.otlp.resourceLabels' order, with the resource's values. */
export interface ResourceLabelSet<S> {
  readonly names: readonly string[];
  readonly values: readonly string[];
  readonly sink: S;
}

export interface ResourceLabelsOptions<S> {
  /** Label ← resource attribute, only those applied (in pack.aggregationLabels): resourceLabelsApplied(). */
  labels: Readonly<Record<string, string>>;
  /** Label sets kept before a new one goes to __other__ (ingest.otlp.maxResourceLabelSets). */
  maxSets: number;
  /** A longer value is cut to this many UTF-8 bytes, marked, as any label value is (metrics.labelValueMaxBytes). */
  maxValueBytes: number;
  /** The sink of a new label set. */
  create(names: readonly string[], values: readonly string[]): S;
  /** `records` records of a set past maxSets were counted under __other__ (label_overflow_total). */
  overflowed(records: number): void;
}

export class OtlpResourceLabels<S> {
  private readonly names: readonly string[];
  private readonly attributes: readonly string[];
  private readonly sets = new Map<string, ResourceLabelSet<S>>();
  private other: ResourceLabelSet<S> | undefined;

  constructor(private readonly opts: ResourceLabelsOptions<S>) {
    this.names = Object.keys(opts.labels);
    this.attributes = this.names.map((n) => opts.labels[n] as string);
  }

  /** Whether any label is applied at all (else every record counts under the exporter's own target). */
  get active(): boolean {
    return this.names.length > 0;
  }

  /**
   * The sink of a resource's `records` records: undefined when the resource carries none of the mapped
   * attributes (it counts under the exporter's own target labels, as a file does). A label whose
   * attribute is absent or empty is left out of the set, so that label is the scrape target's.
   */
  sinkFor(resource: Readonly<Record<string, string>>, records: number): S | undefined {
    const names: string[] = [];
    const values: string[] = [];
    this.names.forEach((name, i) => {
      const v = resource[this.attributes[i] as string];
      if (v === undefined || v === '') return;
      names.push(name);
      values.push(cutToBytes(v, this.opts.maxValueBytes));
    });
    if (names.length === 0) return undefined;
    const key = JSON.stringify([names, values]);
    const known = this.sets.get(key);
    if (known !== undefined) return known.sink;
    if (this.sets.size < this.opts.maxSets) {
      const set = { names, values, sink: this.opts.create(names, values) };
      this.sets.set(key, set);
      return set.sink;
    }
    this.opts.overflowed(records);
    if (this.other === undefined) {
      const others = this.names.map(() => OVERFLOW_VALUE);
      this.other = { names: this.names, values: others, sink: this.opts.create(this.names, others) };
    }
    return this.other.sink;
  }

  /** Every label set so far, __other__ last. */
  *all(): Generator<ResourceLabelSet<S>> {
    yield* this.sets.values();
    if (this.other !== undefined) yield this.other;
  }

  get size(): number {
    return this.sets.size;
  }
}

/** ingest.otlp.resourceLabels when unset: the Kubernetes resource attributes of the OTel semantic conventions. */
export const DEFAULT_RESOURCE_LABELS: Readonly<Record<string, string>> = { cluster: 'k8s.cluster.name', namespace: 'k8s.namespace.name' };

/**
 * The labels applied: ingest.otlp.resourceLabels (or the default), only those in pack.aggregationLabels;
 * the pack aggregates by nothing else, so another label would only split series. (An explicit label that
 * is not an aggregation label is refused by the config's validation.)
 */
export function resourceLabelsApplied(configured: Readonly<Record<string, string>> | undefined, aggregationLabels: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [label, attribute] of Object.entries(configured ?? DEFAULT_RESOURCE_LABELS)) if (aggregationLabels.includes(label)) out[label] = attribute;
  return out;
}
