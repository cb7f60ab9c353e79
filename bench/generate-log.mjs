#!/usr/bin/env node
// Deterministic gateway log for the benchmark: the same seed always gives the same bytes, so every run
// and every machine measures the same input. ~350 bytes a line, in the default preset's format, with the
// rare cases a real log has (degraded, downgrades, cached, malformed opt-in headers written with \u
// escapes, a few unusable lines), so the fast paths are measured together with their fallbacks.
//
//   node bench/generate-log.mjs --lines 1000000 --out FILE [--labels N] [--start-ms EPOCH_MS]
//
// --labels N  spreads model × route × cohort over N × 5 × 4 values (for the /metrics render benchmark).
// --start-ms  first timestamp (default 2026-11-01T00:00:00Z; lines are 1 ms apart).
// Also usable as a module: lineAt(i, opts) gives line i (no trailing newline).
import { closeSync, openSync, writeSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const GENERATOR_VERSION = 1;
export const DEFAULT_START_MS = Date.UTC(2026, 10, 1, 0, 0, 0);

/** mulberry32 seeded per line, so line i does not depend on the lines before it (writers can start anywhere). */
export function rng(seed) {
  let s = seed | 0;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const MODELS = ['claude-sonnet-4', 'claude-haiku-4', 'claude-opus-4'];
const ROUTES = ['/v1/messages', '/v1/messages', '/v1/messages', '/v1/complete'];

/** Line i of the log. `labels` > 0 spreads the label values (render benchmark). */
export function lineAt(i, { startMs = DEFAULT_START_MS, labels = 0, tsMs } = {}) {
  const rand = rng(0x5eed ^ Math.imul(i + 1, 0x9e3779b1));
  const u = rand();
  const normal = Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  // Every 10 000th line has no latency ("-"), every 20 000th is truncated JSON: parse errors in the mix.
  const missingLatency = i % 10_000 === 9_999;
  const truncated = i % 20_000 === 19_997;
  const hit = u < 0.995;
  const degraded = hit && rand() < 0.003;
  const latencyMs = hit ? (degraded ? 240 : 150) * Math.exp(0.1 * normal) : 320 * Math.exp(0.25 * normal);
  const status = hit ? 200 : rand() < 0.8 ? 200 : rand() < 0.5 ? 429 : 503;
  const model = labels > 0 ? `model-${i % labels}` : MODELS[i % MODELS.length];
  const route = labels > 0 ? `/v1/route-${Math.floor(i / labels) % 5}` : ROUTES[i % ROUTES.length];
  const cohort = labels > 0 ? `cohort-${Math.floor(i / (labels * 5)) % 4}` : rand() < 0.1 ? 'canary' : 'stable';

  let response = `"x-anthropic-layer-id":"${hit ? 'zero-plane-v1' : 'standard-v3'}"`;
  if (hit) {
    const warmup = rand() < 0.92 ? 'hit' : 'miss';
    response += `,"x-anthropic-delay-profile":"warmup=${warmup}, degraded=?${degraded ? 1 : 0}, mode=balanced"`;
  } else {
    response += `,"x-anthropic-downgrade-reason":"${rand() < 0.7 ? 'context_too_long' : 'capacity'}"`;
  }
  if (rand() < 0.05) response += ',"x-anthropic-cached":"true"';

  // Opt-in: mostly valid; 1 % with a zero-width space written as a JSON \u escape, 1 % with a raw U+00A0.
  const o = rand();
  const optIn = o < 0.97 ? 'zero-plane-2024' : o < 0.98 ? 'zero-plane-2024\\u200b' : o < 0.99 ? 'zero-plane-2024\u00a0' : undefined;
  const request = optIn === undefined ? '' : `"x-anthropic-experimental":"${optIn}"`;

  const id = (Math.floor(rand() * 2 ** 24) * 2 ** 24 + Math.floor(rand() * 2 ** 24)).toString(16).padStart(12, '0');
  const ts = new Date(tsMs ?? startMs + i).toISOString();
  const latency = missingLatency ? '"-"' : String(Math.round(latencyMs * 1000) / 1000);
  const line =
    `{"ts":"${ts}","request_id":"${id}","latency_ms":${latency},"status":${status},` +
    `"model":"${model}","route":"${route}","cohort":"${cohort}",` +
    `"response_headers":{${response}},"request_headers":{${request}}}`;
  return truncated ? line.slice(0, 24) : line;
}

/** A line (text, or bytes for binary junk) as bytes with its newline. */
export function lineBytes(line) {
  return typeof line === 'string' ? Buffer.from(`${line}\n`, 'utf8') : Buffer.concat([line, Buffer.from('\n')]);
}

/** Writes lineOf(0), …, lineOf(lines - 1) (text or bytes, each given its newline) to `out` in 4 MiB batches; returns the bytes written. */
export function writeLines(out, lines, lineOf) {
  const fd = openSync(out, 'w');
  let bytes = 0;
  try {
    let batch = [];
    let batchLen = 0;
    for (let i = 0; i < lines; i++) {
      const line = lineBytes(lineOf(i));
      batch.push(line);
      batchLen += line.length;
      if (batchLen >= 4 << 20 || i === lines - 1) {
        bytes += writeSync(fd, Buffer.concat(batch));
        batch = [];
        batchLen = 0;
      }
    }
  } finally {
    closeSync(fd);
  }
  return bytes;
}

/** Writes `lines` lines of this generator to `out`. Returns the number of bytes written. */
export function writeLog(out, lines, opts = {}) {
  return writeLines(out, lines, (i) => lineAt(i, opts));
}

function parseArgs(argv) {
  const args = { lines: 1_000_000, out: undefined, labels: 0, startMs: DEFAULT_START_MS };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    if (flag === '--lines') args.lines = Number(value());
    else if (flag === '--out') args.out = value();
    else if (flag === '--labels') args.labels = Number(value());
    else if (flag === '--start-ms') args.startMs = Number(value());
    else throw new Error(`unknown flag ${flag}`);
  }
  if (!Number.isInteger(args.lines) || args.lines < 1) throw new Error('--lines must be a positive integer');
  if (args.out === undefined) throw new Error('--out FILE is required');
  return args;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = parseArgs(process.argv.slice(2));
  const bytes = writeLog(args.out, args.lines, { startMs: args.startMs, labels: args.labels });
  process.stderr.write(`wrote ${args.lines} lines, ${bytes} bytes (${(bytes / args.lines).toFixed(1)} B/line) to ${args.out}\n`);
}
