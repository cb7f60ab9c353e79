// What /metrics serves: prom-client's default process metrics, then our families in the text format
// (exposition.ts). Nothing here runs per line.
import { collectDefaultMetrics, Registry } from 'prom-client';
import { exposedText } from './exposition.js';
import type { ExposedFamily } from './families.js';

export interface Exposable {
  readonly name: string;
  expose(): ExposedFamily;
  /** The family already in the text format, when it can write it faster than expose() is formatted. */
  text?(): string;
}

/** The body of a scrape, and its content type. */
export interface MetricsEndpoint {
  readonly contentType: string;
  metrics(): Promise<string>;
}

export function buildRegistry(families: readonly Exposable[], version: string): MetricsEndpoint {
  const defaults = new Registry();
  collectDefaultMetrics({ register: defaults });
  const buildInfo: Exposable = {
    name: 'zero_plane_exporter_build_info',
    expose: () => ({
      name: 'zero_plane_exporter_build_info',
      help: 'Always 1; the version label tells which build is running.',
      type: 'gauge',
      values: [{ value: 1, labels: { version, nodejs: process.version } }],
    }),
  };
  const all = [...families, buildInfo];
  return {
    contentType: defaults.contentType,
    async metrics() {
      // prom-client separates families with a blank line and ends with a newline; so do we.
      const ours = all.map((f) => (f.text === undefined ? exposedText(f.expose()) : f.text()));
      return `${(await defaults.metrics()).trimEnd()}\n\n${ours.join('\n\n')}\n`;
    },
  };
}
