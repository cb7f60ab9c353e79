// The load generator's request mix, drawn without any network: shares, defects and identical-body runs.
import { describe, expect, it } from 'vitest';
import { gatewayLogLine } from '../../../src/loadgen/log-line.js';
import { DEFAULT_MIX, RequestPlanner, resolveMix, wireHeaderValue, type PlannedRequest } from '../../../src/loadgen/mix.js';
import { classifyOptIn } from '../../../src/signals/opt-in.js';
import { createRng } from '../../../src/simulate/random.js';

function plans(n: number, seed = 11, mix = {}): PlannedRequest[] {
  const planner = new RequestPlanner(resolveMix(mix), createRng(seed));
  return Array.from({ length: n }, () => planner.next());
}

const share = (xs: PlannedRequest[], f: (p: PlannedRequest) => boolean) => xs.filter(f).length / xs.length;
const parsed = (p: PlannedRequest) => JSON.parse(p.body) as { model: string; messages: unknown[]; system?: string; stream?: boolean };

describe('RequestPlanner', () => {
  const sample = plans(20_000);

  it('sends mostly the exact opt-in value, with the configured shares of defects and omissions', () => {
    expect(share(sample, (p) => p.optInVariant === 'valid')).toBeCloseTo(1 - DEFAULT_MIX.malformedOptIn - DEFAULT_MIX.missingOptIn, 2);
    expect(share(sample, (p) => p.optIn === undefined)).toBeCloseTo(DEFAULT_MIX.missingOptIn, 2);
    expect(share(sample, (p) => classifyOptIn(p.optIn, 'zero-plane-2024').state === 'malformed')).toBeCloseTo(DEFAULT_MIX.malformedOptIn, 2);
  });

  it('produces defects the exporter classifies as the intended kind', () => {
    const kinds = new Set<string>();
    for (const p of sample) {
      if (p.optInVariant === 'valid' || p.optInVariant === 'missing') continue;
      expect(classifyOptIn(p.optIn, 'zero-plane-2024')).toEqual({ state: 'malformed', defect: p.optInVariant });
      kinds.add(p.optInVariant);
    }
    expect([...kinds].sort()).toEqual(['case', 'invisible_char', 'whitespace']);
  });

  it('sends non-ASCII header text as its UTF-8 bytes, and ASCII unchanged', () => {
    for (const p of sample) {
      const value = p.headers['x-anthropic-experimental'];
      if (value === undefined) continue;
      const wire = wireHeaderValue(value);
      expect(wire).toMatch(/^[\x20-\x7e\x80-\xff]*$/);
      expect(Buffer.from(wire, 'latin1').toString('utf8')).toBe(value);
    }
    expect(wireHeaderValue('zero-plane-2024')).toBe('zero-plane-2024');
  });

  it('mixes models, canary cohorts, long conversations, long system prompts and stream requests', () => {
    expect(share(sample, (p) => p.model === 'claude-sonnet')).toBeCloseTo(0.7, 1);
    expect(share(sample, (p) => p.model === 'claude-haiku')).toBeCloseTo(0.3, 1);
    expect(share(sample, (p) => p.cohort === 'canary')).toBeCloseTo(DEFAULT_MIX.canary, 1);
    expect(sample.every((p) => p.headers['x-cohort'] === p.cohort)).toBe(true);
    expect(share(sample, (p) => parsed(p).messages.length > 8)).toBeCloseTo(DEFAULT_MIX.longConversation, 2);
    expect(share(sample, (p) => (parsed(p).system?.length ?? 0) > 4800)).toBeCloseTo(DEFAULT_MIX.longSystemPrompt, 2);
    expect(share(sample, (p) => parsed(p).stream === true)).toBeCloseTo(DEFAULT_MIX.stream, 2);
    expect(sample.every((p) => parsed(p).model === p.model)).toBe(true);
  });

  it('sends repeated bodies as consecutive runs, and every other body only once', () => {
    const seen = new Map<string, number>();
    for (const p of sample) seen.set(p.body, (seen.get(p.body) ?? 0) + 1);
    expect([...seen.values()].every((n) => n === 1 || n === DEFAULT_MIX.repeatRunLength)).toBe(true);
    for (let i = 1; i < sample.length; i++) {
      const p = sample[i] as PlannedRequest;
      if (p.repeated) expect(p.body).toBe((sample[i - 1] as PlannedRequest).body);
    }
    expect(share(sample, (p) => seen.get(p.body) === DEFAULT_MIX.repeatRunLength)).toBeCloseTo(DEFAULT_MIX.repeatedBodies, 1);
  });

  it('replays the same requests from the same seed', () => {
    expect(plans(50, 5).map((p) => p.body)).toEqual(plans(50, 5).map((p) => p.body));
    expect(plans(50, 5).map((p) => p.body)).not.toEqual(plans(50, 6).map((p) => p.body));
  });

  it('with draws: even, every run of requests has its shares to within one request', () => {
    const windows = (xs: number[], share: number) => {
      expect(xs.reduce((a, b) => a + b, 0)).toBe(xs.length * share);
      // Any window of n requests: within one of n × share (independent draws cluster far more).
      for (const n of [500, 3_000]) {
        for (let start = 0; start + n <= xs.length; start += 97) {
          const k = xs.slice(start, start + n).reduce((a, b) => a + b, 0);
          expect(Math.abs(k - n * share)).toBeLessThanOrEqual(1);
        }
      }
    };
    // Opt-ins are drawn per request, repeats of a body included.
    const withRuns = plans(20_000, 11, { draws: 'even', malformedOptIn: 0.002, missingOptIn: 0.01, repeatedBodies: 0.05 });
    windows(
      withRuns.map((p) => (p.optInVariant !== 'valid' && p.optInVariant !== 'missing' ? 1 : 0)),
      0.002,
    );
    windows(
      withRuns.map((p) => (p.optInVariant === 'missing' ? 1 : 0)),
      0.01,
    );
    expect(withRuns.some((p) => p.repeated)).toBe(true);
    // Body shapes are drawn per new body.
    const bodies = plans(20_000, 11, { draws: 'even', longConversation: 0.001, stream: 0.004, repeatedBodies: 0 });
    windows(
      bodies.map((p) => (parsed(p).messages.length > 8 ? 1 : 0)),
      0.001,
    );
    windows(
      bodies.map((p) => (parsed(p).stream === true ? 1 : 0)),
      0.004,
    );
  });

  it('repeats only ordinary bodies, so a run never multiplies a long or streamed request', () => {
    for (const p of plans(20_000, 11, { longConversation: 0.2, stream: 0.2, repeatedBodies: 0.3 })) {
      if (p.repeated) expect(parsed(p).messages.length <= 8 && parsed(p).stream !== true).toBe(true);
    }
  });

  it('rejects a bad mix naming the field', () => {
    expect(() => resolveMix({ stream: 1.5 })).toThrow(/stream/);
    expect(() => resolveMix({ malformedOptIn: 0.7, missingOptIn: 0.7 })).toThrow(/malformedOptIn/);
    expect(() => resolveMix({ models: { 'claude-sonnet': 0 } })).toThrow(/models/);
    expect(() => resolveMix({ draws: 'uniform' as 'even' })).toThrow(/draws/);
  });
});

describe('gatewayLogLine', () => {
  it('writes the default record format with lower-case response headers and the opt-in sent', () => {
    const line = gatewayLogLine({
      startedAtMs: Date.UTC(2026, 0, 2, 3, 4, 5, 678),
      latencyMs: 121.23456,
      status: 200,
      model: 'claude-sonnet',
      route: '/v1/messages',
      cohort: 'canary',
      responseHeaders: { 'x-anthropic-layer-id': 'zero-plane-v1', 'set-cookie': ['a=1', 'b=2'] },
      optIn: '\u200bzero-plane-2024',
    });
    expect(JSON.parse(line)).toEqual({
      ts: '2026-01-02T03:04:05.678Z',
      latency_ms: 121.235,
      status: 200,
      model: 'claude-sonnet',
      route: '/v1/messages',
      cohort: 'canary',
      response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1', 'set-cookie': 'a=1, b=2' },
      request_headers: { 'x-anthropic-experimental': '\u200bzero-plane-2024' },
    });
  });

  it('logs an empty request-header object when no opt-in was sent, so the exporter counts it missing', () => {
    const line = gatewayLogLine({ startedAtMs: 0, latencyMs: 1, status: 200, model: 'm', route: '/r', cohort: 'stable', responseHeaders: {}, optIn: undefined });
    expect(JSON.parse(line).request_headers).toEqual({});
  });
});
