// Detection per stream, as a property: any two gateways' logs, each with health probes (no Zero-Plane
// header) anywhere among its requests, delivered as two files of one glob (interleaved in any order), as
// one rotation chain (each generation a new stream of the same path), as ingest bodies (each body one
// file's lines, bodies in any order) or as one stdin stream (the files one after the other) give exactly
// the counts of reading each file with its own preset given. Lines go through the line splitter (the bytes
// path serve reads files with), cut into chunks anywhere.
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { startServe, type RunningServer } from '../../../src/cli/serve-command.js';
import { configSchema } from '../../../src/config/schema.js';
import { createLogger } from '../../../src/server/logger.js';
import { parseConfig } from '../../../src/config/load.js';
import { defaultConfig } from '../../../src/config/schema.js';
import { feedLines } from '../../../src/ingest/feed-lines.js';
import { Pipeline } from '../../../src/pipeline.js';
import { PRESET_NAMES, type PresetName } from '../../../src/record/presets.js';
import { newStream, type Stream } from '../../../src/source/line-sink.js';
import { LineSplitter } from '../../../src/source/line-splitter.js';
import { NOW, PROBE, REQUEST } from '../../helpers/gateway-lines.js';

/** One file: its gateway, and which of its lines are probes. */
interface Part {
  preset: PresetName;
  probes: boolean[];
}

function linesOf(part: Part): string[] {
  return part.probes.map((probe, i) => JSON.stringify(probe ? PROBE[part.preset](i) : REQUEST[part.preset](i, 100 + i)));
}

/** Every non-zero counter series the lines fed, by family and labels. */
function digest(p: Pipeline): Map<string, number> {
  const m = p.metrics;
  const out = new Map<string, number>();
  for (const f of [m.requests, m.parseErrors, m.optIn, m.degraded, m.lines, m.cached, m.warmup]) {
    for (const [labels, value] of f.entries()) if (value !== 0) out.set(`${f.name}{${labels.join(',')}}`, value);
  }
  return out;
}

function add(into: Map<string, number>, from: Map<string, number>): Map<string, number> {
  for (const [k, v] of from) into.set(k, (into.get(k) ?? 0) + v);
  return into;
}

/** The counts of reading each part on its own with its preset given, under `source`. */
function expected(parts: readonly Part[], source: string): Map<string, number> {
  const total = new Map<string, number>();
  for (const part of parts) {
    const p = new Pipeline(parseConfig(`input:\n  preset: ${part.preset}\n`, 't.yml'), { clock: () => NOW });
    for (const l of linesOf(part)) p.line(l, source);
    p.finish();
    add(total, digest(p));
  }
  return total;
}

/** Feeds `text` to `p` as `stream` of `source`, in chunks cut at `cuts` (fractions of its length). */
function push(p: Pipeline, source: string, stream: Stream | undefined, text: string, cuts: readonly number[]): void {
  const splitter = new LineSplitter(1 << 20, p, source, stream);
  const buf = Buffer.from(text);
  const at = [...new Set(cuts.map((c) => Math.floor(c * buf.length)))].sort((a, b) => a - b);
  let from = 0;
  for (const to of [...at, buf.length]) {
    if (to > from) splitter.push(buf.subarray(from, to));
    from = Math.max(from, to);
  }
  splitter.flush();
}

const body = (lines: readonly string[]) => lines.map((l) => `${l}\n`).join('');

const twoPresets = fc.uniqueArray(fc.constantFrom(...PRESET_NAMES), { minLength: 2, maxLength: 2 }) as fc.Arbitrary<[PresetName, PresetName]>;
/** Probes anywhere, up to more than the detector holds (64). */
const probes = fc.array(fc.boolean(), { maxLength: 90 }).chain((a) => fc.constant(a));
const part = (preset: PresetName) => probes.map((p): Part => ({ preset, probes: p }));
const cuts = fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 4 });
const RUNS = { numRuns: 60 };

describe('two gateways, probes anywhere: exactly the counts of each read with its own preset', () => {
  it('two files of one glob, interleaved in any order', () => {
    fc.assert(
      fc.property(
        twoPresets.chain(([a, b]) => fc.tuple(part(a), part(b))),
        fc.array(fc.boolean(), { maxLength: 200 }),
        ([pa, pb], order) => {
          const p = new Pipeline(defaultConfig(), { clock: () => NOW });
          const source = '/var/log/gw/*.jsonl';
          const streams = [newStream(source, '/var/log/gw/a.jsonl'), newStream(source, '/var/log/gw/b.jsonl')];
          const queues = [linesOf(pa), linesOf(pb)];
          for (const pick of order) {
            const i = pick ? 1 : 0;
            const line = queues[i]?.shift();
            if (line !== undefined) p.line(line, source, streams[i]);
          }
          queues.forEach((q, i) => q.forEach((l) => p.line(l, source, streams[i])));
          p.finish();
          expect(digest(p)).toEqual(expected([pa, pb], source));
        },
      ),
      RUNS,
    );
  });

  it('one rotation chain: generation after generation of one path, alternating gateways', () => {
    fc.assert(
      fc.property(
        twoPresets.chain(([a, b]) => fc.tuple(part(a), part(b), part(a))),
        cuts,
        (parts, c) => {
          const p = new Pipeline(defaultConfig(), { clock: () => NOW });
          const source = '/var/log/gw.jsonl';
          for (const gen of parts) push(p, source, newStream(source, source), body(linesOf(gen)), c);
          p.finish();
          expect(digest(p)).toEqual(expected(parts, source));
        },
      ),
      RUNS,
    );
  });

  it("one ingest stream: each body one file's lines, bodies of both files in any order", () => {
    fc.assert(
      fc.property(
        twoPresets.chain(([a, b]) => fc.tuple(part(a), part(b))),
        fc.array(fc.nat({ max: 90 }), { maxLength: 6 }),
        fc.array(fc.boolean(), { maxLength: 20 }),
        ([pa, pb], cutAt, order) => {
          const p = new Pipeline(defaultConfig(), { clock: () => NOW });
          // Each file cut into bodies at the same line numbers.
          const bodies = [pa, pb].map((pt) => {
            const lines = linesOf(pt);
            const at = [...new Set(cutAt.map((n) => n % (lines.length + 1)))].sort((x, y) => x - y);
            return [...at, lines.length].map((to, i, all) => lines.slice(i === 0 ? 0 : (all[i - 1] as number), to)).filter((b) => b.length > 0);
          });
          const send = (lines: string[]) => feedLines(p, [Buffer.from(body(lines))], { maxLineBytes: 1 << 20, source: 'http', recordSeparators: false });
          for (const pick of order) {
            const next = bodies[pick ? 1 : 0]?.shift();
            if (next !== undefined) send(next);
          }
          for (const rest of bodies) for (const b of rest) send(b);
          expect(digest(p)).toEqual(expected([pa, pb], 'http'));
        },
      ),
      RUNS,
    );
  });

  it('one stdin stream: the files one after the other (cat a b a)', () => {
    fc.assert(
      fc.property(
        twoPresets.chain(([a, b]) => fc.tuple(part(a), part(b), part(a))),
        cuts,
        (parts, c) => {
          const p = new Pipeline(defaultConfig(), { clock: () => NOW });
          push(p, 'stdin', undefined, parts.map((pt) => body(linesOf(pt))).join(''), c);
          p.finish();
          expect(digest(p)).toEqual(expected(parts, 'stdin'));
        },
      ),
      RUNS,
    );
  });
});

describe("serve's HTTP ingest, for real: POST bodies of two gateways in any order", () => {
  let server: RunningServer | undefined;
  afterAll(async () => {
    await server?.stop();
  });

  it('each body read with its own preset: the responses and /metrics give the counts of each file read with its preset', async () => {
    const s = (server = await startServe(
      configSchema.parse({ web: { listenAddress: '127.0.0.1:0' }, ingest: { enabled: true } }),
      createLogger('error', () => {}),
    ));
    const requests = (text: string) =>
      text
        .split('\n')
        .filter((l) => l.startsWith('zero_plane_requests_total{'))
        .map((l) => l.split(' '))
        .filter(([, v]) => v !== '0')
        .map(([k, v]) => `${k} ${v}`)
        .sort();
    await fc.assert(
      fc.asyncProperty(
        twoPresets.chain(([a, b]) => fc.tuple(part(a), part(b))),
        fc.array(fc.boolean(), { maxLength: 6 }),
        async ([pa, pb], order) => {
          const before = new Map(requests(await (await fetch(`${s.url}/metrics`)).text()).map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]));
          const bodies = [pa, pb].map((pt) => [linesOf(pt).slice(0, 30), linesOf(pt).slice(30)].filter((b) => b.length > 0));
          let accepted = 0;
          const post = async (lines: string[]) => {
            const res = await fetch(`${s.url}/api/v1/ingest`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: body(lines) });
            accepted += ((await res.json()) as { accepted: number }).accepted;
          };
          for (const pick of order) {
            const next = bodies[pick ? 1 : 0]?.shift();
            if (next !== undefined) await post(next);
          }
          for (const rest of bodies) for (const b of rest) await post(b);
          const want = expected([pa, pb], 'http');
          const after = requests(await (await fetch(`${s.url}/metrics`)).text());
          const got = new Map<string, number>();
          for (const l of after) {
            const k = l.slice(0, l.lastIndexOf(' '));
            const v = Number(l.slice(l.lastIndexOf(' ') + 1)) - (before.get(k) ?? 0);
            if (v !== 0) got.set(k, v);
          }
          const wantRequests = [...want].filter(([k]) => k.startsWith('zero_plane_requests_total{')).reduce((n, [, v]) => n + v, 0);
          expect(accepted).toBe(wantRequests);
          expect([...got.values()].reduce((n, v) => n + v, 0)).toBe(wantRequests);
          // By hit and status class, as each file read with its preset says.
          const byClass = (entries: [string, number][], hitAt: (k: string) => string) => {
            const out: Record<string, number> = {};
            for (const [k, v] of entries) out[hitAt(k)] = (out[hitAt(k)] ?? 0) + v;
            return out;
          };
          expect(byClass([...got], (k) => /hit="(\w+)",status_class="(\w+)"/.exec(k)?.slice(1).join(' ') ?? k)).toEqual(
            byClass(
              [...want].filter(([k]) => k.startsWith('zero_plane_requests_total{')),
              (k) =>
                k
                  .slice(k.indexOf('{') + 1)
                  .split(',')
                  .slice(0, 2)
                  .join(' '),
            ),
          );
        },
      ),
      { numRuns: 15 },
    );
  }, 120_000);
});
