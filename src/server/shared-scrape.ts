// One render of /metrics for every scrape waiting on it. 200 concurrent scrapes rendered 200 bodies:
// each a synchronous pass over every series (the event loop, health probes included, waited behind all
// of them) and each held in memory until its client had read it (313–522 MB RSS against a 256 Mi limit).
// Now a scrape that arrives while a render of its format is under way (or about to start) waits for that
// render and is served its body; the body is encoded once, into Buffers every response writes without
// copying. Nothing is cached: a scrape is never served a render that had finished before it arrived (one
// under way is rendered in slices, RENDER_SLICE_MS, and a scrape may join it between slices).
// A scrape that accepts gzip is served the render's gzipped body, compressed once per render however many
// scrapes share it, on the thread pool (compression.ts).
import { CounterFamily } from '../metrics/families.js';
import type { ExpositionFormat, MetricsEndpoint } from '../metrics/registry.js';
import { AcceptFirst } from './accept-first.js';
import { gzipped } from './compression.js';

/** What became of each scrape of /metrics: its own render, another's (shared), or 503 past --web.max-requests. */
export function scrapeCounter(): CounterFamily {
  const scrapes = new CounterFamily(
    'zero_plane_exporter_scrapes_total',
    'Scrapes of the telemetry path: rendered (a render of their own), shared (served the body of a render under way), refused (503: --web.max-requests scrapes were being answered).',
    ['result'],
  );
  for (const result of ['rendered', 'shared', 'refused']) scrapes.touch([result]);
  return scrapes;
}

/** A rendered body: pieces of about 64 KiB, shared read-only by every response that writes it. */
export interface RenderedBody {
  pieces: readonly Buffer[];
  bytes: number;
}

/** The piece size of a gzipped body: the rendered pieces' size, so responses still take turns a piece each. */
const GZIP_PIECE_BYTES = 64 * 1024;

/** One render: its body, and the body gzipped (made by the first scrape that asks for it). */
interface Render {
  body: RenderedBody;
  gzip?: Promise<RenderedBody>;
}

export type ScrapeEncoding = 'identity' | 'gzip';

export class SharedScrape {
  private readonly pending = new Map<ExpositionFormat, Promise<Render>>();
  private compressions = 0;
  private renderCount = 0;
  private readonly acceptFirst = new AcceptFirst();

  constructor(
    private readonly registry: MetricsEndpoint,
    /** Runs before each render (window gauges computed at scrape time). */
    private readonly beforeRender: () => void,
    private readonly counter?: CounterFamily,
  ) {}

  /** Renders started so far (each served one or more scrapes). */
  get renders(): number {
    return this.renderCount;
  }

  /** Bodies gzipped so far (one per render that a scrape asking for gzip shared). */
  get gzipped(): number {
    return this.compressions;
  }

  /** The body of the render under way for `format`, or of a new one; gzipped when `encoding` is gzip. */
  async body(format: ExpositionFormat, encoding: ScrapeEncoding = 'identity'): Promise<RenderedBody> {
    let render = this.pending.get(format);
    if (render !== undefined) this.counter?.inc(['shared']);
    else {
      this.counter?.inc(['rendered']);
      const started = this.render(format).finally(() => this.pending.delete(format));
      render = started.then((body): Render => ({ body }));
      this.pending.set(format, render);
    }
    const r = await render;
    if (encoding === 'identity') return r.body;
    r.gzip ??= this.gzip(r.body);
    return r.gzip;
  }

  private async gzip(body: RenderedBody): Promise<RenderedBody> {
    this.compressions++;
    const out = await gzipped(Buffer.concat(body.pieces as Buffer[], body.bytes));
    const pieces: Buffer[] = [];
    for (let at = 0; at < out.length; at += GZIP_PIECE_BYTES) pieces.push(out.subarray(at, at + GZIP_PIECE_BYTES));
    return { pieces, bytes: out.length };
  }

  private async render(format: ExpositionFormat): Promise<RenderedBody> {
    this.renderCount++;
    // Started after the poll phase, not in the first request's handler: every scrape whose request Node
    // reads in this turn of the event loop joins this render instead of starting its own, and a health
    // probe read in the same turn is answered before it. Rendered at once, 200 scrapes read together were
    // 200 renders back to back, and the probe (and new connections) waited behind all of them. While
    // connections are still being accepted (one per turn) the render waits for them too: a probe behind a
    // burst is accepted sooner, and the burst's scrapes join this render.
    do await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.acceptFirst.shouldDefer());
    this.beforeRender();
    // Between its slices too, the render lets connections still arriving be accepted first.
    const chunks = await this.registry.chunks(format, () => this.acceptFirst.shouldDefer());
    const pieces = chunks.map((c) => Buffer.from(c));
    let bytes = 0;
    for (const p of pieces) bytes += p.length;
    return { pieces, bytes };
  }
}
