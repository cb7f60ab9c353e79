// What /metrics serves: prom-client's default process metrics, then our families in the text format
// (exposition.ts). Nothing here runs per line.
import { collectDefaultMetrics, Registry } from 'prom-client';
import { GaugeFamily } from './families.js';

/** A family /metrics shows: it writes its own text-format block. */
export interface Exposable {
  readonly name: string;
  text(): string;
}

/** The body of a scrape, and its content type. */
export interface MetricsEndpoint {
  readonly contentType: string;
  metrics(): Promise<string>;
}

export function buildRegistry(families: readonly Exposable[], version: string): MetricsEndpoint {
  const defaults = new Registry();
  collectDefaultMetrics({ register: defaults });
  const buildInfo = new GaugeFamily('zero_plane_exporter_build_info', 'Always 1; the version label tells which build is running.', ['version', 'nodejs']);
  buildInfo.set([version, process.version], 1);
  const all = [...families, buildInfo];
  return {
    contentType: defaults.contentType,
    async metrics() {
      // prom-client separates families with a blank line and ends with a newline; so do we.
      const ours = all.map((f) => f.text());
      return `${(await defaults.metrics()).trimEnd()}\n\n${ours.join('\n\n')}\n`;
    },
  };
}
