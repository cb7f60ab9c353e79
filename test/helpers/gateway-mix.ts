// The known mix sent through a real gateway to the simulator, and the truth taken from what came back: the
// counts a report of the gateway's log must show. The truth is computed here from the responses (their
// headers and statuses) and from what was sent (the opt-in variants), with the SPEC's rules written out
// again, not with the exporter's code.
import { expect } from 'vitest';
import http from 'node:http';
import type { Faults } from '../../src/simulate/faults.js';
import { wireHeaderValue } from '../../src/loadgen/mix.js';
import { LOCAL_ANSWER_PATH } from './gateways.js';

export type OptInVariant = 'valid' | 'missing' | 'invisible_char' | 'whitespace' | 'case' | 'value';

export interface MixRequest {
  path: string;
  body: string;
  optIn: OptInVariant;
  /** The opt-in header value sent; undefined when none is. */
  optInValue: string | undefined;
  model: string;
  cohort: string;
  /** Faults the simulator has while this request is answered. */
  faults: Partial<Faults>;
}

export interface MixResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
}

const OPT_IN = 'zero-plane-2024';
const VALUES: Record<OptInVariant, string[]> = {
  valid: [OPT_IN],
  missing: [],
  invisible_char: [`${OPT_IN}\u200b`, `\ufeff${OPT_IN}`],
  whitespace: [`${OPT_IN}\u00a0`],
  case: ['Zero-Plane-2024'],
  value: ['zero-plane-2023'],
};

const messages = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `${tag} turn ${i}` }));
const body = (tag: string, extra: Record<string, unknown> = {}, turns = 1) => JSON.stringify({ model: 'claude-sonnet', max_tokens: 256, messages: messages(turns, tag), ...extra });

/**
 * 42 requests, sent one after the other (the cache answers the 4th identical body in a row): valid opt-ins
 * on two models and two cohorts, each opt-in defect and a missing one, long conversations (429 in strict
 * mode), four identical bodies, `stream: true` (400), three while every answer is degraded, and one the
 * gateway answers itself.
 */
export function knownMix(): MixRequest[] {
  const out: MixRequest[] = [];
  let n = 0;
  const add = (optIn: OptInVariant, opts: { path?: string; body?: string; faults?: Partial<Faults>; valueAt?: number } = {}) => {
    const i = n++;
    const values = VALUES[optIn];
    out.push({
      path: opts.path ?? '/v1/messages',
      body: opts.body ?? body(`request ${i}`),
      optIn,
      optInValue: values.length === 0 ? undefined : values[(opts.valueAt ?? 0) % values.length],
      model: i % 2 === 0 ? 'claude-sonnet' : 'claude-haiku',
      cohort: i % 6 === 5 ? 'canary' : 'stable',
      faults: opts.faults ?? {},
    });
  };
  for (let i = 0; i < 12; i++) add('valid');
  add('invisible_char', { valueAt: 0 });
  add('valid');
  add('invisible_char', { valueAt: 1 });
  add('whitespace');
  add('case');
  add('value');
  add('missing');
  add('missing');
  add('valid', { body: body('long conversation', {}, 9) });
  add('valid', { body: body('longer conversation', {}, 11) });
  const repeated = body('the same body four times');
  for (let i = 0; i < 4; i++) add('valid', { body: repeated });
  add('valid', { body: body('streamed', { stream: true }) });
  for (let i = 0; i < 3; i++) add('valid', { faults: { degradedRate: 1 } });
  add('valid', { path: LOCAL_ANSWER_PATH });
  for (let i = 0; i < 11; i++) add('valid');
  return out;
}

/** Sends each request in order and returns the responses, in the same order. */
export async function sendMix(baseUrl: string, requests: readonly MixRequest[], setFaults: (faults: Partial<Faults>) => void): Promise<MixResponse[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const out: MixResponse[] = [];
  try {
    for (const r of requests) {
      setFaults(r.faults);
      out.push(await send(new URL(r.path, baseUrl), r, agent));
    }
  } finally {
    setFaults({});
    agent.destroy();
  }
  return out;
}

function send(url: URL, r: MixRequest, agent: http.Agent): Promise<MixResponse> {
  const payload = Buffer.from(r.body, 'utf8');
  const headers: Record<string, string | number> = { 'content-type': 'application/json', 'content-length': payload.length, 'x-model': r.model, 'x-cohort': r.cohort };
  if (r.optInValue !== undefined) headers['x-anthropic-experimental'] = wireHeaderValue(r.optInValue);
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers, timeout: 15_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url.href}`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** The counts a report of the gateway's log must show, from the requests sent and the responses got. */
export interface Truth {
  requests: number;
  hits: number;
  degradedCount: number;
  warmupHits: number;
  warmupMisses: number;
  cachedCount: number;
  downgrades: Record<string, number>;
  throttleModes: Record<string, number>;
  optInHeader: { valid: number; missing: number; malformed: number };
  optInDefects: Record<string, number>;
  statusClasses: Record<string, number>;
  topStatusCodes: { code: number; count: number }[];
}

const one = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v.join(', ') : v);
const bump = (o: Record<string, number>, k: string) => (o[k] = (o[k] ?? 0) + 1);
const sorted = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));

export function truthOf(requests: readonly MixRequest[], responses: readonly MixResponse[]): Truth {
  const t: Truth = {
    requests: responses.length,
    hits: 0,
    degradedCount: 0,
    warmupHits: 0,
    warmupMisses: 0,
    cachedCount: 0,
    downgrades: {},
    throttleModes: {},
    optInHeader: { valid: 0, missing: 0, malformed: 0 },
    optInDefects: { case: 0, invisible_char: 0, value: 0, whitespace: 0 },
    statusClasses: {},
    topStatusCodes: [],
  };
  const codes: Record<string, number> = {};
  responses.forEach((res, i) => {
    const h = res.headers;
    const hit = /^zero-plane-v[0-9]+$/.test(one(h['x-anthropic-layer-id']) ?? '');
    // The simulator writes the delay profile as "warmup=hit, degraded=?0, mode=strict" (or just "mode=strict").
    const profile = Object.fromEntries(
      (one(h['x-anthropic-delay-profile']) ?? '')
        .split(', ')
        .filter(Boolean)
        .map((m) => m.split('=') as [string, string]),
    );
    if (hit) t.hits++;
    if (profile.degraded === '?1') t.degradedCount++;
    if (hit && profile.warmup === 'hit') t.warmupHits++;
    if (hit && profile.warmup === 'miss') t.warmupMisses++;
    if (profile.mode !== undefined) bump(t.throttleModes, profile.mode);
    if (one(h['x-anthropic-cached']) === 'true') t.cachedCount++;
    const reason = one(h['x-anthropic-downgrade-reason']);
    if (reason !== undefined) bump(t.downgrades, reason);
    bump(t.statusClasses, `${Math.floor(res.status / 100)}xx`);
    bump(codes, String(res.status));
    const variant = (requests[i] as MixRequest).optIn;
    if (variant === 'valid' || variant === 'missing') t.optInHeader[variant]++;
    else {
      t.optInHeader.malformed++;
      bump(t.optInDefects, variant);
    }
  });
  t.downgrades = sorted(t.downgrades);
  t.throttleModes = sorted(t.throttleModes);
  t.statusClasses = sorted(t.statusClasses);
  t.topStatusCodes = Object.entries(codes)
    .map(([code, count]) => ({ code: Number(code), count }))
    .sort((a, b) => b.count - a.count || a.code - b.code);
  return t;
}

/** The nearest-rank quantile of `values` (rank ⌈q·n⌉), as the SPEC defines it. */
export function nearestRank(values: readonly number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.max(0, Math.ceil(q * s.length) - 1)] as number;
}

/** A report's counts that the truth from the responses fixes, exactly, and no parse error. */
export function expectReportCounts(report: Record<string, unknown>, truth: Truth): void {
  expect(report).toMatchObject({
    lines: truth.requests,
    records: truth.requests,
    requests: truth.requests,
    hits: truth.hits,
    degradedCount: truth.degradedCount,
    warmupHits: truth.warmupHits,
    warmupMisses: truth.warmupMisses,
    cachedCount: truth.cachedCount,
    downgrades: truth.downgrades,
    throttleModes: truth.throttleModes,
    optInHeader: truth.optInHeader,
    optInDefects: truth.optInDefects,
    statusClasses: truth.statusClasses,
    topStatusCodes: truth.topStatusCodes,
    headerParseErrors: {},
  });
  expect(
    Object.values(report.parseErrors as Record<string, number>).every((n) => n === 0),
    JSON.stringify(report.parseErrors),
  ).toBe(true);
}
