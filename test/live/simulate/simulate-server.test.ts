// The simulator over real HTTP on loopback: each rule as a client sees it, with real latencies where the
// test is about latency and an injected sleep where it is not.
import http, { type IncomingHttpHeaders } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { wireHeaderValue } from '../../../src/loadgen/mix.js';
import { DelayProfileReader } from '../../../src/signals/delay-profile.js';
import { reportedAnswerMs } from '../../../src/simulate/protocol.js';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../../src/simulate/simulator.js';

const reader = new DelayProfileReader({ degradedMember: 'degraded', warmupMember: 'warmup', modeMember: 'mode' });
const OPT_IN = { 'x-anthropic-experimental': 'zero-plane-2024' };

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  json: Record<string, unknown>;
  ms: number;
}

/**
 * One request with node:http, not fetch: fetch trims header values, which would hide the stray-space
 * defect. Non-ASCII header text goes out as its UTF-8 bytes, as a real client sends it.
 */
function call(url: string, opts: { method?: string; body?: string; headers?: Record<string, string> } = {}): Promise<Reply> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  for (const [k, v] of Object.entries(opts.headers ?? {})) headers[k] = wireHeaderValue(v);
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: opts.method ?? 'POST', headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, json: JSON.parse(text) as Record<string, unknown>, ms: performance.now() - t0 });
        } catch (err) {
          reject(new Error(`not JSON (${res.statusCode}): ${text}`, { cause: err }));
        }
      });
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

let seq = 0;
/** A Messages body; unique unless `text` is given, so the cache rule only fires when a test wants it. */
function messages(fields: { count?: number; system?: string; stream?: boolean; text?: string } = {}): string {
  const count = fields.count ?? 1;
  const text = fields.text ?? `question ${++seq}`;
  const msgs = Array.from({ length: count }, (_, i) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content: `${text} / ${i}` }));
  const b: Record<string, unknown> = { model: 'claude-haiku', max_tokens: 64, messages: msgs };
  if (fields.system !== undefined) b.system = fields.system;
  if (fields.stream !== undefined) b.stream = fields.stream;
  return JSON.stringify(b);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const running: RunningSimulator[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

async function sim(opts: SimulatorOptions = {}): Promise<RunningSimulator & { post(body: string, headers?: Record<string, string>): Promise<Reply> }> {
  const s = await startSimulator({ seed: 42, ...opts });
  running.push(s);
  return { ...s, post: (body, headers = OPT_IN) => call(`${s.url}/v1/messages`, { body, headers }) };
}

/** A simulator that records the delays it decided (from onAnswer: exact whatever the machine's load) instead of waiting them out. */
async function instantSim(opts: SimulatorOptions = {}) {
  const decided: number[] = [];
  const s = await sim({ ...opts, sleep: async () => {}, onAnswer: (a) => void decided.push(a.decision.delayMs) });
  return { ...s, decided };
}

describe('simulator: opt-in header', () => {
  it('serves the exact opt-in value from the fast layer, with a delay profile the exporter parses', async () => {
    const s = await instantSim();
    const r = await s.post(messages());
    expect(r.status).toBe(200);
    expect(r.headers['x-anthropic-layer-id']).toBe('zero-plane-v1');
    const profile = reader.read(r.headers['x-anthropic-delay-profile'] as string);
    expect(profile).toMatchObject({ degraded: false, mode: 'balanced' });
    expect(['hit', 'miss']).toContain(profile?.warmup);
    expect(r.json).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-haiku',
      content: [{ type: 'text', text: expect.any(String) }],
      stop_reason: 'end_turn',
      usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) },
    });
    expect(r.json.id).toMatch(/^msg_/);
  });

  it.each([
    ['a zero-width space', '\u200bzero-plane-2024'],
    ['a word joiner at the end', 'zero-plane-2024\u2060'],
    ['a non-breaking space', 'zero-plane-2024\u00a0'],
    ['upper case', 'ZERO-PLANE-2024'],
    ['mixed case', 'Zero-Plane-2024'],
    ['an inner space', 'zero-plane -2024'],
  ])('falls back silently when the value carries %s', async (_what, value) => {
    const s = await instantSim();
    const r = await s.post(messages(), { 'x-anthropic-experimental': value });
    expect(r.status).toBe(200);
    expect(r.headers['x-anthropic-layer-id']).toBe('standard-v3');
    expect(r.headers['x-anthropic-delay-profile']).toBeUndefined();
    expect(r.headers['x-anthropic-downgrade-reason']).toBeUndefined();
    expect(r.json.type).toBe('message');
  });

  it('falls back without the header', async () => {
    const s = await instantSim();
    expect((await s.post(messages(), {})).headers['x-anthropic-layer-id']).toBe('standard-v3');
  });
});

describe('simulator: real latency', () => {
  // Only lower bounds on wall-clock time (a timer never fires early); how long the simulator *decides* to
  // wait is read from the injected sleep, so no assertion depends on how busy the machine is.
  it('really waits: a fast-layer answer takes at least its ~120 ms', async () => {
    const s = await sim();
    expect((await s.post(messages())).ms).toBeGreaterThanOrEqual(114);
  });

  it('decides about 120 ms for the fast layer and slower for fallbacks', async () => {
    const s = await instantSim();
    for (let i = 0; i < 5; i++) await s.post(messages());
    const fast = s.decided.splice(0);
    for (let i = 0; i < 3; i++) await s.post(messages(), {});
    const slow = s.decided.splice(0);
    // decide.ts's exact ranges are unit-tested in simulate-decide; here the server applies them.
    expect(Math.min(...fast)).toBeGreaterThanOrEqual(115);
    expect(Math.max(...fast)).toBeLessThanOrEqual(125);
    expect(median(slow)).toBeGreaterThan(median(fast) + 30);
  });

  it('waits the decided delay through an injectable sleep', async () => {
    // The sleep is held until released: the answer must not leave before it, however fast the machine.
    let release: () => void = () => {};
    const asked: number[] = [];
    const decided: number[] = [];
    let sleeping: () => void = () => {};
    const slept = new Promise<void>((resolve) => (sleeping = resolve));
    const s = await sim({
      sleep: (ms) => {
        asked.push(ms);
        sleeping();
        return new Promise<void>((resolve) => (release = resolve));
      },
      onAnswer: (a) => void decided.push(a.decision.delayMs),
    });
    let answered = false;
    const reply = s.post(messages()).then((r) => ((answered = true), r));
    await slept;
    await new Promise((r) => setTimeout(r, 50));
    expect(answered).toBe(false);
    release();
    expect((await reply).status).toBe(200);
    expect(asked).toHaveLength(1);
    expect(decided[0]).toBeGreaterThanOrEqual(115);
    expect(decided[0]).toBeLessThanOrEqual(125);
    // The sleep gets what is left of the decided delay: never more, never negative.
    expect(asked[0]).toBeGreaterThanOrEqual(0);
    expect(asked[0]).toBeLessThanOrEqual(decided[0] as number);
  });
});

describe('simulator: too long for the fast layer', () => {
  it('downgrades more than 8 messages to the fallback with context_too_long', async () => {
    const s = await instantSim();
    const r = await s.post(messages({ count: 9 }));
    expect(r.status).toBe(200);
    expect(r.headers['x-anthropic-downgrade-reason']).toBe('context_too_long');
    expect(r.headers['x-anthropic-layer-id']).toBe('standard-v3');
    expect((await s.post(messages({ count: 8 }))).headers['x-anthropic-layer-id']).toBe('zero-plane-v1');
  });

  it('downgrades a system prompt over about 1200 tokens', async () => {
    const s = await instantSim();
    const r = await s.post(messages({ system: 'operating notes '.repeat(320) })); // 5120 chars ≈ 1280 tokens
    expect(r.headers['x-anthropic-downgrade-reason']).toBe('context_too_long');
    expect(r.headers['x-anthropic-layer-id']).toBe('standard-v3');
  });

  it('answers 429 with a JSON rate_limit_error in strict mode, and reports mode=strict', async () => {
    const s = await instantSim({ mode: 'strict' });
    const r = await s.post(messages({ count: 10 }));
    expect(r.status).toBe(429);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.json).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', message: expect.stringContaining('context_too_long') } });
    const ok = await s.post(messages());
    expect(reader.read(ok.headers['x-anthropic-delay-profile'] as string)?.mode).toBe('strict');
  });
});

describe('simulator: bad requests', () => {
  it('rejects "stream": true with a 400 JSON error', async () => {
    const s = await instantSim();
    const r = await s.post(messages({ stream: true }));
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringMatching(/stream/) } });
  });

  it('rejects a malformed JSON body with an Anthropic-style 400', async () => {
    const s = await instantSim();
    const r = await s.post('{"model":"claude-haiku","messages":[{"role":"user",');
    expect(r.status).toBe(400);
    expect(r.json).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringMatching(/not valid JSON/) } });
  });

  it('answers unknown paths and wrong methods with JSON errors', async () => {
    const s = await instantSim();
    expect((await call(`${s.url}/v1/complete`, { body: '{}' })).json).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    const get = await call(`${s.url}/v1/messages`, { method: 'GET' });
    expect(get.status).toBe(405);
    expect(get.headers.allow).toBe('POST');
  });
});

describe('simulator: identical bodies', () => {
  it('answers the 4th identical body in a row from the cache, faster', async () => {
    const s = await instantSim();
    const body = messages({ text: 'the same question' });
    const replies: Reply[] = [];
    for (let i = 0; i < 4; i++) replies.push(await s.post(body));
    expect(replies.map((r) => r.headers['x-anthropic-cached'])).toEqual([undefined, undefined, undefined, 'true']);
    const [a, b, c, fourth] = s.decided as [number, number, number, number];
    expect(fourth).toBeLessThan(Math.min(a, b, c) - 40);
    // A different body in between starts the count again.
    await s.post(messages());
    expect((await s.post(body)).headers['x-anthropic-cached']).toBeUndefined();
  });
});

describe('simulator: /admin/faults', () => {
  const admin = (s: { url: string }, method: string, body?: unknown) =>
    call(`${s.url}/admin/faults`, { method, ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }) });

  it('reads, replaces, merges and resets the faults', async () => {
    const s = await instantSim();
    expect((await admin(s, 'GET')).json).toEqual({ latencyDriftRatio: 0, degradedRate: 0, warmupEfficiencyDrop: 0, hitRateDrop: 0 });
    expect((await admin(s, 'PUT', { degradedRate: 0.5 })).json).toMatchObject({ degradedRate: 0.5, hitRateDrop: 0 });
    expect((await admin(s, 'PATCH', { hitRateDrop: 0.1 })).json).toMatchObject({ degradedRate: 0.5, hitRateDrop: 0.1 });
    expect(s.faults.get()).toMatchObject({ degradedRate: 0.5, hitRateDrop: 0.1 });
    expect((await admin(s, 'DELETE')).json).toEqual({ latencyDriftRatio: 0, degradedRate: 0, warmupEfficiencyDrop: 0, hitRateDrop: 0 });
  });

  it.each([
    [{ degradedRate: 2 }, 'degradedRate'],
    [{ hitRateDrop: -1 }, 'hitRateDrop'],
    [{ latencyDriftRatio: '10%' }, 'latencyDriftRatio'],
    [{ warmupMissRate: 0.5 }, 'warmupMissRate'],
  ])('rejects %j with a 400 naming the field and keeps the faults', async (body, field) => {
    const s = await instantSim({ faults: { degradedRate: 0.25 } });
    const r = await admin(s, 'PUT', body);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining(field) } });
    expect(s.faults.get().degradedRate).toBe(0.25);
  });

  it('rejects a body that is not JSON with a 400', async () => {
    const s = await instantSim();
    const r = await admin(s, 'PUT', 'degradedRate=1');
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });

  it('marks every fast answer degraded=?1 at degradedRate 1', async () => {
    const s = await instantSim();
    await admin(s, 'PUT', { degradedRate: 1 });
    for (let i = 0; i < 8; i++) {
      const r = await s.post(messages());
      expect(r.headers['x-anthropic-layer-id']).toBe('zero-plane-v1');
      expect(reader.read(r.headers['x-anthropic-delay-profile'] as string)?.degraded).toBe(true);
    }
  });

  it('raises fast-layer latency with latencyDriftRatio', async () => {
    const s = await instantSim();
    for (let i = 0; i < 3; i++) await s.post(messages());
    const before = s.decided.splice(0);
    await admin(s, 'PUT', { latencyDriftRatio: 0.5 }); // 120 ms → 180 ms
    for (let i = 0; i < 3; i++) await s.post(messages());
    const after = s.decided.splice(0);
    expect(Math.min(...after)).toBeGreaterThan(Math.max(...before) + 30);
    expect(Math.min(...after)).toBeGreaterThanOrEqual(172.5); // (115–125) × 1.5
  });

  it('sends every opted-in request to the fallback at hitRateDrop 1, and back after DELETE', async () => {
    const s = await instantSim();
    await admin(s, 'PUT', { hitRateDrop: 1 });
    for (let i = 0; i < 8; i++) expect((await s.post(messages())).headers['x-anthropic-layer-id']).toBe('standard-v3');
    await admin(s, 'DELETE');
    expect((await s.post(messages())).headers['x-anthropic-layer-id']).toBe('zero-plane-v1');
  });
});

describe('simulator: lifecycle', () => {
  it('closes promptly while a slow answer is still pending', async () => {
    const s = await startSimulator({ fallbackLatency: { medianMs: 5_000, sigma: 0 } });
    running.push(s);
    const pending = call(`${s.url}/v1/messages`, { body: messages() }).catch((err: Error) => err);
    await new Promise((r) => setTimeout(r, 50));
    const t0 = performance.now();
    await s.close();
    expect(performance.now() - t0).toBeLessThan(1_000);
    expect(await pending).toBeInstanceOf(Error);
  });

  it('refuses a port that is taken', async () => {
    const s = await instantSim();
    const port = Number(new URL(s.url).port);
    await expect(startSimulator({ port })).rejects.toThrow(/EADDRINUSE/);
  });
});

describe('simulator: reportAnswerTime (the demo)', () => {
  it('reports the time the layer decided to take, even when its wait runs long', async () => {
    // A wait that runs 80 ms long, as on a machine that keeps the simulator off the CPU.
    const s = await sim({ reportAnswerTime: true, fastLatency: { meanMs: 50, jitterMs: 0 }, sleep: (ms) => new Promise((r) => setTimeout(r, ms + 80)) });
    const r = await s.post(messages());
    expect(r.ms).toBeGreaterThanOrEqual(130);
    expect(reportedAnswerMs(r.headers['server-timing'])).toBe(50);
    const cached = await instantSim({ reportAnswerTime: true, cachedLatency: { meanMs: 30, jitterMs: 0 } });
    for (let i = 0; i < 3; i++) await cached.post(messages({ text: 'same' }));
    expect(reportedAnswerMs((await cached.post(messages({ text: 'same' }))).headers['server-timing'])).toBe(30);
  });

  it('without it, reports nothing', async () => {
    const s = await instantSim();
    expect((await s.post(messages())).headers['server-timing']).toBeUndefined();
  });
});
