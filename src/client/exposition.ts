// How an application shows the client's metrics: a /metrics handler for express or node:http, or a
// prom-client Registry to merge with the application's own. Both read the same families the exporter
// writes (metrics/families.ts), so the text is the exporter's text.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Metric, Registry } from 'prom-client';
import { CounterFamily, type GaugeFamily, HistogramFamily } from '../metrics/families.js';
import { nodeModule } from './lazy-builtins.js';

export type Family = CounterFamily | GaugeFamily | HistogramFamily;

/** Something with metrics to show: an instrumented fetch, a gate client. */
export interface MetricsSource {
  families(): readonly Family[];
  /** Brings computed values (the window gauges) up to date; called once before each scrape. */
  beforeScrape?(): void;
}

/** prom-client's Registry.PROMETHEUS_CONTENT_TYPE, spelt out: prom-client is loaded only by prometheusRegistry(). */
export const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * prom-client (CommonJS) loaded on first use: importing it costs ~45 ms and ~13 MB, which an application
 * that serves metricsHandler() (or sends its records away) should not pay.
 */
function promClient(): typeof import('prom-client') {
  return nodeModule().createRequire(import.meta.url)('prom-client') as typeof import('prom-client');
}

/** Two sources showing one family would make an exposition Prometheus rejects: refuse it up front. */
function checkDistinct(sources: readonly MetricsSource[]): void {
  const seen = new Set<string>();
  for (const source of sources) {
    for (const family of source.families()) {
      if (seen.has(family.name)) {
        throw new Error(`${family.name} is shown by two of the sources given; use one instrumented fetch (and one gate client) per application`);
      }
      seen.add(family.name);
    }
  }
}

/** The text format of every family of the sources. */
export function metricsText(sources: readonly MetricsSource[]): string {
  for (const source of sources) source.beforeScrape?.();
  return `${sources.flatMap((s) => s.families().map((f) => f.text())).join('\n\n')}\n`;
}

/**
 * A request handler serving the sources' metrics, for express (`app.get('/metrics', handler)`) or
 * node:http (`if (req.url === '/metrics') return handler(req, res)`). Throws when two sources show the
 * same family.
 */
export function metricsHandler(...sources: MetricsSource[]): (req: IncomingMessage, res: ServerResponse) => void {
  checkDistinct(sources);
  return (_req, res) => {
    let body: string;
    try {
      body = metricsText(sources);
    } catch (err) {
      res.statusCode = 500;
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.end(`error collecting metrics: ${(err as Error).message}\n`);
      return;
    }
    res.statusCode = 200;
    res.setHeader('Content-Type', CONTENT_TYPE);
    res.end(body);
  };
}

type LabelValues = Record<string, string>;

interface PromValue {
  value: number;
  labels: LabelValues;
  metricName?: string;
}

function labelsOf(names: readonly string[], values: readonly string[], extra: LabelValues = {}): LabelValues {
  const out: LabelValues = {};
  names.forEach((name, i) => (out[name] = values[i] as string));
  return { ...out, ...extra };
}

function promValues(family: Family): PromValue[] {
  if (!(family instanceof HistogramFamily)) {
    return family.entries().map(([labels, value]) => ({ value, labels: labelsOf(family.labelNames, labels) }));
  }
  const out: PromValue[] = [];
  for (const row of family.entries()) {
    let acc = 0;
    family.bounds.forEach((bound, i) => {
      acc += row.counts[i] as number;
      out.push({ metricName: `${family.name}_bucket`, value: acc, labels: labelsOf(family.labelNames, row.labels, { le: String(bound) }) });
    });
    out.push({ metricName: `${family.name}_bucket`, value: row.count, labels: labelsOf(family.labelNames, row.labels, { le: '+Inf' }) });
    out.push({ metricName: `${family.name}_sum`, value: row.sum, labels: labelsOf(family.labelNames, row.labels) });
    out.push({ metricName: `${family.name}_count`, value: row.count, labels: labelsOf(family.labelNames, row.labels) });
  }
  return out;
}

/**
 * The sources' families as a prom-client Registry, to merge with the application's own:
 * `Registry.merge([register, prometheusRegistry(zpFetch, gate)])`. Values are read at each scrape.
 */
export function prometheusRegistry(...sources: MetricsSource[]): Registry {
  checkDistinct(sources);
  const registry = new (promClient().Registry)();
  for (const source of sources) {
    source.families().forEach((family, i) => {
      const type = family instanceof HistogramFamily ? 'histogram' : family instanceof CounterFamily ? 'counter' : 'gauge';
      const collector = {
        name: family.name,
        help: family.help,
        type,
        aggregator: 'sum',
        get: async () => {
          // prom-client collects a registry's metrics in registration order: the first family of a source
          // brings the source's computed values up to date for the rest.
          if (i === 0) source.beforeScrape?.();
          return { name: family.name, help: family.help, type, aggregator: 'sum', values: promValues(family) };
        },
        reset: () => undefined,
      };
      // prom-client's registry takes any object with a name and an async get(); its Metric type is the
      // union of its own classes, which this collector is not.
      registry.registerMetric(collector as unknown as Metric);
    });
  }
  return registry;
}
