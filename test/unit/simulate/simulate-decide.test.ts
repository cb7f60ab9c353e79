// The simulator's rules as a pure function: no server, no waiting, a seeded random source.
import { describe, expect, it } from 'vitest';
import { contextTooLong, decide, jittered, longTailed, type Decision, type DecisionInput } from '../../../src/simulate/decide.js';
import { FaultController, FaultValidationError, NO_FAULTS, type Faults } from '../../../src/simulate/faults.js';
import { DEFAULT_PROFILE, resolveProfile, type SimulatorProfile } from '../../../src/simulate/profile.js';
import { createRng, EvenDraws } from '../../../src/simulate/random.js';
import { RepeatTracker } from '../../../src/simulate/repeat-tracker.js';
import { readMessagesRequest } from '../../../src/simulate/request.js';
import { DelayProfileReader } from '../../../src/signals/delay-profile.js';

const reader = new DelayProfileReader({ degradedMember: 'degraded', warmupMember: 'warmup', modeMember: 'mode' });

function body(fields: { messages?: number; system?: unknown; stream?: boolean; model?: string } = {}): string {
  const n = fields.messages ?? 1;
  const messages = Array.from({ length: n }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `turn ${i}` }));
  const b: Record<string, unknown> = { model: fields.model ?? 'claude-sonnet', max_tokens: 256, messages };
  if (fields.system !== undefined) b.system = fields.system;
  if (fields.stream !== undefined) b.stream = fields.stream;
  return JSON.stringify(b);
}

function run(input: Partial<DecisionInput>, opts: { profile?: Partial<SimulatorProfile>; faults?: Partial<Faults>; seed?: number } = {}): Decision {
  return decide(
    { body: body(), optIn: 'zero-plane-2024', repeat: 1, ...input },
    { profile: { ...DEFAULT_PROFILE, ...opts.profile }, faults: { ...NO_FAULTS, ...opts.faults }, rng: createRng(opts.seed ?? 7) },
  );
}

describe('decide: the opt-in header', () => {
  it('serves exactly "zero-plane-2024" from the fast layer with a parseable delay profile', () => {
    const d = run({});
    expect(d.outcome).toBe('fast');
    expect(d.status).toBe(200);
    expect(d.headers['x-anthropic-layer-id']).toBe('zero-plane-v1');
    const profile = reader.read(d.headers['x-anthropic-delay-profile'] as string);
    expect(profile).not.toBeNull();
    expect(profile?.mode).toBe('balanced');
    expect(profile?.degraded).toBe(false);
    expect(['hit', 'miss']).toContain(profile?.warmup);
  });

  it.each([
    ['a zero-width space', '\u200bzero-plane-2024'],
    ['a byte-order mark', '\ufeffzero-plane-2024'],
    ['a leading space', ' zero-plane-2024'],
    ['a trailing space', 'zero-plane-2024 '],
    ['a non-breaking space', 'zero-plane-2024\u00a0'],
    ['other case', 'Zero-Plane-2024'],
    ['another value', 'zero-plane-2023'],
    ['no header', undefined],
  ])('falls back silently on %s', (_what, optIn) => {
    const d = run({ optIn });
    expect(d.outcome).toBe('fallback');
    expect(d.status).toBe(200);
    expect(d.headers['x-anthropic-layer-id']).toBe('standard-v3');
    expect(d.headers['x-anthropic-delay-profile']).toBeUndefined();
    expect(d.headers['x-anthropic-downgrade-reason']).toBeUndefined();
  });

  it('omits the layer header on fallbacks when the fallback layer id is null', () => {
    const d = run({ optIn: undefined }, { profile: { fallbackLayerId: null } });
    expect(d.outcome).toBe('fallback');
    expect(d.headers).not.toHaveProperty('x-anthropic-layer-id');
  });
});

describe('decide: latency', () => {
  it('keeps the fast layer within 120 ms ± 5 ms', () => {
    const rng = createRng(1);
    const samples = Array.from({ length: 5000 }, () => jittered(rng, DEFAULT_PROFILE.fastLatency));
    expect(Math.min(...samples)).toBeGreaterThanOrEqual(115);
    expect(Math.max(...samples)).toBeLessThanOrEqual(125);
    expect(samples.reduce((a, b) => a + b, 0) / samples.length).toBeCloseTo(120, 0);
  });

  it('gives fallbacks a median around 300 ms and a long tail', () => {
    const rng = createRng(2);
    const samples = Array.from({ length: 5000 }, () => longTailed(rng, DEFAULT_PROFILE.fallbackLatency)).sort((a, b) => a - b);
    const median = samples[2500] as number;
    expect(median).toBeGreaterThan(285);
    expect(median).toBeLessThan(315);
    expect(samples[4950]).toBeGreaterThan(600); // p99 ≈ 300·e^(0.35·2.33) ≈ 680 ms
    expect(Math.max(...samples)).toBeLessThanOrEqual(DEFAULT_PROFILE.fallbackLatency.maxMs);
  });
});

describe('decide: too long for the fast layer', () => {
  it('downgrades more than 8 messages to the fallback with context_too_long', () => {
    const d = run({ body: body({ messages: 9 }) });
    expect(d.outcome).toBe('downgraded');
    expect(d.status).toBe(200);
    expect(d.headers['x-anthropic-downgrade-reason']).toBe('context_too_long');
    expect(d.headers['x-anthropic-layer-id']).toBe('standard-v3');
  });

  it('serves exactly 8 messages from the fast layer', () => {
    expect(run({ body: body({ messages: 8 }) }).outcome).toBe('fast');
  });

  it('downgrades a system prompt over 1200 tokens (chars / 4), as a string or as text blocks', () => {
    expect(run({ body: body({ system: 'x'.repeat(4800) }) }).outcome).toBe('fast'); // exactly 1200 tokens
    expect(run({ body: body({ system: 'x'.repeat(4801) }) }).headers['x-anthropic-downgrade-reason']).toBe('context_too_long');
    const blocks = [
      { type: 'text', text: 'y'.repeat(3000) },
      { type: 'text', text: 'z'.repeat(3000) },
    ];
    expect(run({ body: body({ system: blocks }) }).outcome).toBe('downgraded');
  });

  it('answers 429 with a JSON rate_limit_error in strict mode', () => {
    const d = run({ body: body({ messages: 12 }) }, { profile: { mode: 'strict' } });
    expect(d.outcome).toBe('rejected');
    expect(d.status).toBe(429);
    expect(d.body).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
    expect(JSON.stringify(d.body)).toContain('context_too_long');
    expect(reader.read(d.headers['x-anthropic-delay-profile'] as string)?.mode).toBe('strict');
  });

  it('reports mode=strict on fast answers in strict mode', () => {
    expect(reader.read(run({}, { profile: { mode: 'strict' } }).headers['x-anthropic-delay-profile'] as string)?.mode).toBe('strict');
  });

  it('does not downgrade requests that did not opt in: they were never the fast layer’s', () => {
    const d = run({ body: body({ messages: 12 }), optIn: undefined });
    expect(d.outcome).toBe('fallback');
    expect(d.headers['x-anthropic-downgrade-reason']).toBeUndefined();
  });

  it('names the limit that was exceeded', () => {
    const r = readMessagesRequest(body({ messages: 10 }));
    if (!r.ok) throw new Error(r.message);
    expect(contextTooLong(r.request, DEFAULT_PROFILE)).toMatch(/10 messages/);
  });
});

describe('decide: bad requests', () => {
  it('rejects "stream": true with a 400 that says streaming is unsupported', () => {
    const d = run({ body: body({ stream: true }) });
    expect(d.status).toBe(400);
    expect(d.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(JSON.stringify(d.body)).toMatch(/stream/i);
  });

  it.each([
    ['malformed JSON', '{"model": "claude-sonnet", "messages": [', /not valid JSON/],
    ['an empty body', '', /empty/],
    ['a JSON array', '[]', /JSON object/],
    ['no messages', '{"model":"claude-sonnet","max_tokens":10}', /messages/],
    ['no model', '{"messages":[{"role":"user","content":"hi"}]}', /model/],
  ])('rejects %s with an Anthropic-style 400', (_what, text, message) => {
    const d = run({ body: text });
    expect(d.status).toBe(400);
    expect(d.body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringMatching(message) } });
  });
});

describe('decide: repeated bodies', () => {
  it('answers the 4th identical body in a row from the cache, faster', () => {
    for (const repeat of [1, 2, 3]) expect(run({ repeat }).cached).toBe(false);
    const fourth = run({ repeat: 4 });
    expect(fourth.cached).toBe(true);
    expect(fourth.headers['x-anthropic-cached']).toBe('true');
    expect(fourth.headers['x-anthropic-layer-id']).toBe('zero-plane-v1');
    expect(fourth.delayMs).toBeLessThan(run({ repeat: 3 }).delayMs - 50);
    expect(run({ repeat: 5 }).cached).toBe(true);
  });

  it('counts identical bodies in a row, restarting on any other body', () => {
    const t = new RepeatTracker();
    expect(['a', 'a', 'a', 'a', 'b', 'a', 'a'].map((b) => t.see(b))).toEqual([1, 2, 3, 4, 1, 1, 2]);
  });
});

describe('decide: faults', () => {
  it('marks every fast answer degraded at degradedRate 1', () => {
    for (let seed = 0; seed < 20; seed++) {
      const d = run({}, { seed, faults: { degradedRate: 1 } });
      expect(reader.read(d.headers['x-anthropic-delay-profile'] as string)?.degraded).toBe(true);
    }
  });

  it('scales fast-layer latency by 1 + latencyDriftRatio', () => {
    for (let seed = 0; seed < 20; seed++) {
      expect(run({}, { seed, faults: { latencyDriftRatio: 0.1 } }).delayMs).toBeCloseTo(run({}, { seed }).delayMs * 1.1, 6);
    }
  });

  it('sends every opted-in request to the fallback at hitRateDrop 1', () => {
    for (let seed = 0; seed < 20; seed++) expect(run({}, { seed, faults: { hitRateDrop: 1 } }).outcome).toBe('fallback');
  });

  it('turns every warm-up into a miss when warmupEfficiencyDrop removes all efficiency', () => {
    for (let seed = 0; seed < 20; seed++) {
      const d = run({}, { seed, faults: { warmupEfficiencyDrop: 1 } });
      expect(reader.read(d.headers['x-anthropic-delay-profile'] as string)?.warmup).toBe('miss');
    }
  });

  it('reports warm-up hits near the profile efficiency without faults', () => {
    const rng = createRng(3);
    let hits = 0;
    for (let i = 0; i < 4000; i++) {
      const d = decide({ body: body(), optIn: 'zero-plane-2024', repeat: 1 }, { profile: DEFAULT_PROFILE, faults: NO_FAULTS, rng });
      if (reader.read(d.headers['x-anthropic-delay-profile'] as string)?.warmup === 'hit') hits++;
    }
    expect(hits / 4000).toBeGreaterThan(0.9);
    expect(hits / 4000).toBeLessThan(0.935);
  });
});

describe('FaultController', () => {
  it('replaces on set, merges on update, and resets to no faults', () => {
    const f = new FaultController();
    expect(f.get()).toEqual(NO_FAULTS);
    expect(f.set({ degradedRate: 0.5, latencyDriftRatio: 0.1 })).toEqual({ ...NO_FAULTS, degradedRate: 0.5, latencyDriftRatio: 0.1 });
    expect(f.update({ hitRateDrop: 0.2 })).toEqual({ ...NO_FAULTS, degradedRate: 0.5, latencyDriftRatio: 0.1, hitRateDrop: 0.2 });
    expect(f.set({ hitRateDrop: 0.3 })).toEqual({ ...NO_FAULTS, hitRateDrop: 0.3 });
    expect(f.reset()).toEqual(NO_FAULTS);
  });

  it.each([
    [{ degradedRate: 1.5 }, 'degradedRate'],
    [{ hitRateDrop: -0.1 }, 'hitRateDrop'],
    [{ latencyDriftRatio: 'ten percent' }, 'latencyDriftRatio'],
    [{ warmupEfficiencyDrop: null }, 'warmupEfficiencyDrop'],
    [{ degradedRatio: 1 }, 'degradedRatio'],
  ])('rejects %j naming the field, keeping the current faults', (input, field) => {
    const f = new FaultController({ degradedRate: 0.25 });
    expect(() => f.set(input)).toThrow(FaultValidationError);
    expect(() => f.update(input)).toThrow(new RegExp(field));
    expect(f.get().degradedRate).toBe(0.25);
  });
});

describe('resolveProfile', () => {
  it('applies overrides over the defaults and names a bad option', () => {
    const p = resolveProfile({ mode: 'strict', fastLatency: { meanMs: 180 } });
    expect(p.mode).toBe('strict');
    expect(p.fastLatency).toEqual({ meanMs: 180, jitterMs: 5 });
    expect(() => resolveProfile({ fastLatency: { meanMs: -1 } })).toThrow(/fastLatency\.meanMs/);
    expect(() => resolveProfile({ mode: 'relaxed' as never })).toThrow(/mode/);
  });
});

describe('decide: even draws', () => {
  it('spreads warm-up hits and degraded answers exactly by their shares', () => {
    const draws = new EvenDraws();
    const rng = createRng(3);
    const ctx = { profile: DEFAULT_PROFILE, faults: { ...NO_FAULTS, degradedRate: 0.2 }, rng, draws };
    const profiles = Array.from({ length: 1000 }, () => reader.read(decide({ body: body(), optIn: 'zero-plane-2024', repeat: 1 }, ctx).headers['x-anthropic-delay-profile'] as string));
    expect(profiles.filter((p) => p?.warmup === 'hit')).toHaveLength(917);
    expect(profiles.filter((p) => p?.degraded)).toHaveLength(200);
    // Every 5th is degraded: no run of answers is without one.
    for (let i = 0; i + 5 <= profiles.length; i++) expect(profiles.slice(i, i + 5).filter((p) => p?.degraded)).toHaveLength(1);
  });

  it('never says yes at 0 and always at 1', () => {
    const d = new EvenDraws();
    expect(Array.from({ length: 100 }, () => d.chance('a', 0)).some(Boolean)).toBe(false);
    expect(Array.from({ length: 100 }, () => d.chance('b', 1)).every(Boolean)).toBe(true);
  });
});
