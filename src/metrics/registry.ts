// The prom-client edge: our plain families are handed to a prom-client Registry, which formats them
// beside its default process metrics. Nothing here runs per line.
import { collectDefaultMetrics, Registry, type Metric } from 'prom-client';
import type { ExposedFamily } from './families.js';

export interface Exposable {
  readonly name: string;
  expose(): ExposedFamily;
}

export function buildRegistry(families: readonly Exposable[], version: string): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const buildInfo: Exposable = {
    name: 'zero_plane_exporter_build_info',
    expose: () => ({
      name: 'zero_plane_exporter_build_info',
      help: 'Always 1; the version label tells which build is running.',
      type: 'gauge',
      values: [{ value: 1, labels: { version, nodejs: process.version } }],
    }),
  };
  for (const family of [...families, buildInfo]) {
    const adapter = { name: family.name, get: async () => ({ ...family.expose(), aggregator: 'sum' as const }) };
    // prom-client's Registry reads only `name` and `get()` from a metric; its typings name only its own
    // classes, so this duck-typed adapter needs the cast.
    registry.registerMetric(adapter as unknown as Metric);
  }
  return registry;
}
