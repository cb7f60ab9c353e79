// What /metrics serves: prom-client's default process metrics, then our families in the text format
// (exposition.ts). Nothing here runs per line.
import { collectDefaultMetrics, Registry } from 'prom-client';
import { GaugeFamily } from './families.js';

/** A family /metrics shows: it writes its own text-format block. */
export interface Exposable {
  readonly name: string;
  text(): string;
  /** text() in pieces; when present, /metrics writes these instead of one string of the whole family. */
  chunks?(): Iterable<string>;
}

/** The body of a scrape, and its content type. */
export interface MetricsEndpoint {
  readonly contentType: string;
  /** The whole body as one string (for tests and small registries; /metrics writes chunks()). */
  metrics(): Promise<string>;
  /**
   * The same body in pieces of about 64 KiB (exposition.ts), taken in one synchronous pass so the scrape
   * is one consistent moment; however many series there are, no piece is a string of the whole.
   */
  chunks(): Promise<string[]>;
}

export function buildRegistry(families: readonly Exposable[], version: string): MetricsEndpoint {
  const defaults = new Registry();
  collectDefaultMetrics({ register: defaults });
  const buildInfo = new GaugeFamily('zero_plane_exporter_build_info', 'Always 1; the version label tells which build is running.', ['version', 'nodejs']);
  buildInfo.set([version, process.version], 1);
  const all = [...families, buildInfo];
  const chunks = async (): Promise<string[]> => {
    // prom-client separates families with a blank line and ends with a newline; so do we.
    const out = [`${(await defaults.metrics()).trimEnd()}\n\n`];
    all.forEach((family, i) => {
      if (family.chunks === undefined) out.push(family.text());
      else for (const chunk of family.chunks()) out.push(chunk);
      out.push(i === all.length - 1 ? '\n' : '\n\n');
    });
    return out;
  };
  return {
    contentType: defaults.contentType,
    chunks,
    async metrics() {
      return (await chunks()).join('');
    },
  };
}
