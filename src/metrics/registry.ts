// What /metrics serves: prom-client's default process metrics, then our families, in the Prometheus text
// format (exposition.ts) or, when the scraper asks for it, OpenMetrics 1.0 (openmetrics.ts). Nothing here
// runs per line.
import { performance } from 'node:perf_hooks';
import { collectDefaultMetrics, Registry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { labelText } from './exposition.js';
import { GaugeFamily } from './families.js';
import { canonicalNumber, OPENMETRICS_CONTENT_TYPE, OPENMETRICS_EOF, openMetricsFamilyName, openMetricsHeader, openMetricsSeconds, openMetricsValue, type OpenMetricsType } from './openmetrics.js';

/** A family /metrics shows: it writes its own text-format block, and its OpenMetrics block. */
export interface Exposable {
  readonly name: string;
  text(): string;
  /** text() in pieces; when present, /metrics writes these instead of one string of the whole family. */
  chunks?(): Iterable<string>;
  /** The family in OpenMetrics 1.0, in pieces (no final newline); `created` false leaves `_created` out. */
  openMetricsChunks(created?: boolean): Iterable<string>;
}

export type ExpositionFormat = 'text' | 'openmetrics';

/** The body of a scrape, and its content type. */
export interface MetricsEndpoint {
  contentTypeOf(format: ExpositionFormat): string;
  /** The whole body as one string (for tests and small registries; /metrics writes chunks()). */
  metrics(format?: ExpositionFormat): Promise<string>;
  /**
   * The same body in pieces of about 64 KiB (exposition.ts); however many series there are, no piece is a
   * string of the whole. Rendered in slices that yield to the event loop (RENDER_SLICE_MS); between two
   * slices the loop turns again for as long as `deferWhile` says so (the server: connections still arriving).
   */
  chunks(format?: ExpositionFormat, deferWhile?: () => boolean): Promise<string[]>;
}

export interface RegistryOptions {
  /** `_created` samples under OpenMetrics (web.openMetricsCreated); Prometheus before 3.0 stores each as a series. */
  created?: boolean;
}

export function buildRegistry(families: readonly Exposable[], version: string, opts: RegistryOptions = {}): MetricsEndpoint {
  const created = opts.created ?? true;
  const defaults = new Registry();
  collectDefaultMetrics({ register: defaults });
  const all = [...families, buildInfoFamily(version)];
  const text = async (deferWhile?: () => boolean): Promise<string[]> => {
    // prom-client separates families with a blank line and ends with a newline; so do we.
    const out = [`${(await defaults.metrics()).trimEnd()}\n\n`];
    const slice = new RenderSlices(deferWhile);
    for (const [i, family] of all.entries()) {
      if (family.chunks === undefined) out.push(family.text());
      else
        for (const chunk of family.chunks()) {
          out.push(chunk);
          await slice.maybeYield();
        }
      out.push(i === all.length - 1 ? '\n' : '\n\n');
      await slice.maybeYield();
    }
    return out;
  };
  const openMetrics = async (deferWhile?: () => boolean): Promise<string[]> => {
    const out = defaultsOpenMetrics(await defaults.getMetricsAsJSON(), created);
    const slice = new RenderSlices(deferWhile);
    for (const family of all) {
      for (const chunk of family.openMetricsChunks(created)) {
        out.push(chunk);
        await slice.maybeYield();
      }
      out.push('\n');
      await slice.maybeYield();
    }
    out.push(OPENMETRICS_EOF);
    return out;
  };
  const chunks = (format: ExpositionFormat = 'text', deferWhile?: () => boolean) => (format === 'openmetrics' ? openMetrics(deferWhile) : text(deferWhile));
  return {
    contentTypeOf: (format) => (format === 'openmetrics' ? OPENMETRICS_CONTENT_TYPE : defaults.contentType),
    chunks,
    async metrics(format: ExpositionFormat = 'text') {
      return (await chunks(format)).join('');
    },
  };
}

/**
 * A render hands the event loop back every RENDER_SLICE_MS, between pieces (~64 KiB, cut between series):
 * rendered in one synchronous pass, a 3 MB body held every health probe and every new connection for the
 * whole render (and 200 scrapes' renders back to back for seconds). Each series is still written in one
 * step (a histogram's buckets, count and sum agree); series written in different slices may be up to a
 * slice apart, as with client_golang, whose collectors run concurrently.
 */
export const RENDER_SLICE_MS = 8;

class RenderSlices {
  private since = performance.now();

  constructor(private readonly deferWhile?: () => boolean) {}

  async maybeYield(): Promise<void> {
    if (performance.now() - this.since < RENDER_SLICE_MS) return;
    do await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.deferWhile?.() === true);
    this.since = performance.now();
  }
}

/** zero_plane_exporter_build_info{version, nodejs} 1 */
export function buildInfoFamily(version: string): GaugeFamily {
  const buildInfo = new GaugeFamily('zero_plane_exporter_build_info', 'Always 1; the version label tells which build is running.', ['version', 'nodejs']);
  buildInfo.set([version, process.version], 1);
  return buildInfo;
}

/**
 * Whether an Accept header prefers OpenMetrics 1.0 to the text format, as client_golang negotiates: the
 * acceptable media ranges by quality, the first that is either decides. Prometheus asks for
 * `application/openmetrics-text;version=1.0.0` first, then an older OpenMetrics at q=0.75, `text/plain` at
 * q=0.5 and anything at q=0.1.
 */
export function prefersOpenMetrics(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  const ranges = accept.split(',').map((part, order) => {
    const [type = '', ...params] = part.split(';').map((p) => p.trim());
    let q = 1;
    let version: string | undefined;
    for (const p of params) {
      const [k, v] = p.split('=').map((x) => x.trim());
      if (k === 'q') q = Number(v);
      if (k === 'version') version = v;
    }
    return { type: type.toLowerCase(), q: Number.isFinite(q) ? q : 0, version, order };
  });
  ranges.sort((a, b) => b.q - a.q || a.order - b.order);
  for (const r of ranges) {
    if (r.q <= 0) continue;
    if (r.type === 'application/openmetrics-text' && (r.version === undefined || r.version === '1.0.0' || r.version === '0.0.1')) return true;
    if (r.type === 'text/plain' || r.type === 'text/*' || r.type === '*/*') return false;
  }
  return false;
}

/**
 * prom-client's default metrics in OpenMetrics (its own OpenMetrics output has no units, no `_created` and
 * the text format's `le`). They count from process start, which is their `_created`.
 */
function defaultsOpenMetrics(metrics: MetricObjectWithValues<MetricValue<string>>[], withCreated: boolean): string[] {
  const created = withCreated ? openMetricsSeconds(performance.timeOrigin) : undefined;
  const createdLine = (name: string, labels: string) => (created === undefined ? '' : `\n${name}_created${labels} ${created}`);
  const out: string[] = [];
  const labelsOf = (labels: Partial<Record<string, string | number>>, drop?: string) => {
    const names = Object.keys(labels).filter((k) => k !== drop);
    return labelText(
      names,
      names.map((k) => String(labels[k])),
    );
  };
  for (const m of metrics) {
    // prom-client's typings say an enum; at run time the type is its name.
    const kind = m.type as unknown as string;
    const type: OpenMetricsType = kind === 'counter' || kind === 'gauge' || kind === 'histogram' ? kind : 'unknown';
    const family = openMetricsFamilyName(m.name, type);
    let block = openMetricsHeader(family, m.help, type);
    if (type === 'histogram') {
      // Values come as _bucket (with le), _sum and _count samples; one series per label set without le.
      const series = new Map<string, { labels: string; buckets: string[]; sum: number; count: number }>();
      for (const v of m.values as (MetricValue<string> & { metricName?: string })[]) {
        const labels = labelsOf(v.labels, 'le');
        let s = series.get(labels);
        if (s === undefined) series.set(labels, (s = { labels, buckets: [], sum: 0, count: 0 }));
        const open = labels === '' ? '{' : `{${labels},`;
        if (v.metricName?.endsWith('_bucket')) {
          const le = v.labels.le;
          s.buckets.push(`${m.name}_bucket${open}le="${le === '+Inf' ? '+Inf' : canonicalNumber(Number(le))}"} ${openMetricsValue(v.value)}`);
        } else if (v.metricName?.endsWith('_sum')) s.sum = v.value;
        else if (v.metricName?.endsWith('_count')) s.count = v.value;
      }
      for (const s of series.values()) {
        const plain = s.labels === '' ? '' : `{${s.labels}}`;
        block += `\n${s.buckets.join('\n')}\n${m.name}_count${plain} ${openMetricsValue(s.count)}\n${m.name}_sum${plain} ${openMetricsValue(s.sum)}${createdLine(m.name, plain)}`;
      }
    } else {
      for (const v of m.values) {
        const labels = labelsOf(v.labels);
        const braces = labels === '' ? '' : `{${labels}}`;
        if (type === 'counter') block += `\n${family}_total${braces} ${openMetricsValue(v.value)}${createdLine(family, braces)}`;
        else block += `\n${m.name}${braces} ${openMetricsValue(v.value)}`;
      }
    }
    out.push(`${block}\n`);
  }
  return out;
}
