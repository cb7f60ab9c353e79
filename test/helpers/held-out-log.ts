// A deterministic gateway log with a story, for the history tests: a healthy hour, then drift with
// degraded requests (the P0), then recovery. Seeded, so every run reads the same lines. Records carry
// their request's start time but are written when it completes, so they come slightly out of order, as
// Envoy's or Kong's logs do; `bad` adds lines a real log has (not JSON, no timestamp, far-out times).
import { createRng, standardNormal, type Rng } from '../../src/simulate/random.js';

export const HELD_OUT_START_MS = Date.UTC(2024, 4, 7, 0, 0, 0);
const MINUTE = 60_000;

export interface Phase {
  minutes: number;
  /** Share of Zero-Plane requests that are slow (≈ 205 ms, above the 194.25 ms ceiling); the others take 182 ± 2 ms, in the band. */
  slow: number;
  /** Share of Zero-Plane requests whose delay profile says degraded. */
  degraded: number;
}

/** Healthy, drift with degraded requests, recovery. */
export const HELD_OUT_PHASES: readonly Phase[] = [
  { minutes: 60, slow: 0, degraded: 0 },
  { minutes: 40, slow: 0.3, degraded: 0.05 },
  { minutes: 60, slow: 0, degraded: 0 },
];

export interface HeldOutOptions {
  seed?: number;
  /** Requests per second. */
  rate?: number;
  startMs?: number;
  phases?: readonly Phase[];
  /** Add unusable lines: not JSON, no timestamp, epoch 0 and year 3000 (counts in the result). */
  bad?: boolean;
}

export interface HeldOutLog {
  lines: string[];
  /** Lines written, by kind (the bad ones only with `bad`). */
  counts: { records: number; invalidJson: number; noTimestamp: number; farOut: number };
  endMs: number;
}

function record(rng: Rng, startedAt: number, phase: Phase): { line: string; doneAt: number } {
  const hit = rng() >= 0.003;
  const slow = hit && rng() < phase.slow;
  const degraded = hit && rng() < phase.degraded;
  const latencyMs = hit ? (slow ? 205 + 4 * standardNormal(rng) : 182 + 2 * standardNormal(rng)) : 320 + 30 * standardNormal(rng);
  const cohort = rng() < 0.1 ? 'canary' : 'stable';
  const model = rng() < 0.7 ? 'claude-sonnet-4' : 'claude-haiku-4';
  const response: Record<string, string> = { 'x-anthropic-layer-id': hit ? 'zero-plane-v1' : 'standard-v3' };
  if (hit) response['x-anthropic-delay-profile'] = `warmup=${rng() < 0.92 ? 'hit' : 'miss'}, degraded=?${degraded ? 1 : 0}, mode=balanced`;
  const line = JSON.stringify({
    ts: new Date(startedAt).toISOString(),
    latency_ms: Math.round(latencyMs * 1000) / 1000,
    status: hit || rng() < 0.8 ? 200 : 429,
    model,
    route: '/v1/messages',
    cohort,
    response_headers: response,
    request_headers: { 'x-anthropic-experimental': 'zero-plane-2024' },
  });
  return { line, doneAt: startedAt + latencyMs };
}

export function heldOutLog(opts: HeldOutOptions = {}): HeldOutLog {
  const rng = createRng(opts.seed ?? 14);
  const rate = opts.rate ?? 3;
  const start = opts.startMs ?? HELD_OUT_START_MS;
  const written: { line: string; doneAt: number }[] = [];
  let at = start;
  for (const phase of opts.phases ?? HELD_OUT_PHASES) {
    const end = at + phase.minutes * MINUTE;
    for (let t = at; t < end; t += 1000 / rate) written.push(record(rng, Math.floor(t + rng() * (1000 / rate)), phase));
    at = end;
  }
  // Written when each request completes: start times slightly out of order.
  written.sort((a, b) => a.doneAt - b.doneAt);
  const lines = written.map((w) => w.line);
  const counts = { records: lines.length, invalidJson: 0, noTimestamp: 0, farOut: 0 };
  if (opts.bad === true) {
    const insert = (i: number, line: string) => lines.splice(Math.floor(lines.length * i), 0, line);
    insert(0.2, '{"ts":"2024-05-07T00:12:00Z","latency_ms":1'); // cut off mid-line
    insert(0.5, 'GET /v1/messages 200');
    counts.invalidJson += 2;
    for (const f of [0.3, 0.6, 0.9]) insert(f, JSON.stringify({ latency_ms: 170, status: 200, response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1' } }));
    counts.noTimestamp += 3;
    insert(0.4, JSON.stringify({ ts: '1970-01-01T00:00:00Z', latency_ms: 999, status: 200, response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1' } }));
    insert(0.7, JSON.stringify({ ts: '3000-01-01T00:00:00Z', latency_ms: 999, status: 200, response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1' } }));
    counts.farOut += 2;
  }
  return { lines, counts, endMs: at };
}
