// The real Anthropic SDK through instrumentFetch against the simulator in stream mode (the first event a
// set delay after the headers): messages.create() and messages.stream() over a known mix. Each call's
// record (time to headers, time to first event, total duration, tokens, served model) must sit inside what
// the test itself measured around the call and what the simulator logged when it wrote, and the tokens and
// model must be exactly the simulator's; the SDK's final message must be the simulator's message, and the
// bytes must pass through unchanged. The GenAI families add up to the records.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instrumentFetch, metricsText } from '../../../src/client/index.js';
import type { AnthropicMessage } from '../../../src/simulate/protocol.js';
import { startSimulator, type RunningSimulator, type SimulatorAnswer } from '../../../src/simulate/simulator.js';
import { tempDir } from '../../helpers/temp-dir.js';

const OPT_IN = { 'x-anthropic-experimental': 'zero-plane-2024' };
const FIRST_EVENT_DELAY_MS = 120;
const SERVED = 'claude-sonnet-4-20250514';

interface Line {
  latency_ms: number;
  status: number;
  model: string;
  duration_ms?: number;
  first_event_ms?: number;
  stream?: true;
  tokens?: { input: number; output: number; cache_read: number; cache_creation: number };
  response_model?: string;
  error_type?: string;
}

/** What the test saw of one call, on performance.now()'s clock. */
interface Measured {
  /** Just before the SDK call. */
  start: number;
  /** When the fetch under the instrumentation was called, and when it resolved (headers). */
  fetchCalled: number;
  headers: number;
  /** The SDK's first text event (streams), and when the call's result was complete. */
  firstText?: number;
  done: number;
}

let simulator: RunningSimulator;
const answers: SimulatorAnswer[] = [];

beforeAll(async () => {
  simulator = await startSimulator({
    seed: 26,
    fastLatency: { meanMs: 20, jitterMs: 2 },
    fallbackLatency: { medianMs: 30, sigma: 0.2, maxMs: 60 },
    stream: { enabled: true, firstEventDelayMs: FIRST_EVENT_DELAY_MS, eventGapMs: 5, deltas: 5 },
    servedModels: { 'claude-sonnet': SERVED },
    onAnswer: (a) => answers.push(a),
  });
});
afterAll(async () => {
  await simulator?.close();
});

let seq = 0;
const params = (text = `question ${++seq}`) => ({ model: 'claude-sonnet', max_tokens: 64, messages: [{ role: 'user' as const, content: text }] });

describe('instrumentFetch with the SDK against a simulator that streams', () => {
  it('records latency, time to first event, duration, tokens and the served model as measured and as sent', async () => {
    answers.length = 0;
    const log = join(tempDir('zp-client-streams-'), 'calls.jsonl');
    let current: Measured | undefined;
    // Under the instrumentation: when the request left and the headers came, as the test sees it.
    const timedFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      if (current !== undefined) current.fetchCalled = performance.now();
      const r = await fetch(input, init);
      if (current !== undefined) current.headers = performance.now();
      return r;
    };
    const zp = instrumentFetch(timedFetch, { warn: () => undefined, to: { logFile: log } });
    const client = new Anthropic({ apiKey: 'sk-test', baseURL: simulator.url, fetch: zp, maxRetries: 0 });
    const measured: Measured[] = [];
    const results: (Anthropic.Message | undefined)[] = [];
    const begin = (): Measured => {
      current = { start: performance.now(), fetchCalled: NaN, headers: NaN, done: NaN };
      measured.push(current);
      return current;
    };

    // The mix: plain calls on Zero-Plane and off it, streams (two SDK ways), a cached answer, a refused stream.
    for (const headers of [OPT_IN, OPT_IN, {}]) {
      const m = begin();
      results.push(await client.messages.create(params(), { headers }));
      m.done = performance.now();
    }
    for (let i = 0; i < 3; i++) {
      const m = begin();
      const stream = client.messages.stream(params());
      stream.on('text', () => (m.firstText ??= performance.now()));
      results.push(await stream.finalMessage());
      m.done = performance.now();
    }
    {
      const m = begin();
      const events = await client.messages.create({ ...params(), stream: true });
      for await (const e of events) if (e.type === 'content_block_delta') m.firstText ??= performance.now();
      m.done = performance.now();
      results.push(undefined);
    }
    for (let i = 0; i < 4; i++) {
      const m = begin();
      results.push(await client.messages.create(params('the same question'), { headers: OPT_IN })); // the 4th is cached
      m.done = performance.now();
    }
    {
      const m = begin();
      await expect(client.messages.create({ ...params(), stream: true }, { headers: OPT_IN })).rejects.toBeInstanceOf(Anthropic.BadRequestError);
      m.done = performance.now();
      results.push(undefined);
    }
    await zp.close();

    const lines = readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Line);
    expect(lines).toHaveLength(measured.length);
    expect(answers).toHaveLength(measured.length);
    const streams = answers.filter((a) => a.stream !== undefined).length;
    expect(streams).toBe(4);
    expect(answers.filter((a) => a.decision.cached)).toHaveLength(1);

    lines.forEach((line, i) => {
      const m = measured[i] as Measured;
      const a = answers[i] as SimulatorAnswer;
      const why = `call ${i}`;
      // The instrumentation's clock starts between the test's start and the fetch under it.
      expect(line.latency_ms, why).toBeGreaterThanOrEqual(m.headers - m.fetchCalled - 0.001);
      expect(line.latency_ms, why).toBeLessThanOrEqual(m.headers - m.start + 0.001);
      expect(line.duration_ms, why).toBeDefined();
      expect(line.duration_ms as number, why).toBeGreaterThanOrEqual(line.latency_ms);
      expect(line.duration_ms as number, why).toBeLessThanOrEqual(m.done - m.start + 0.001);
      if (a.decision.status !== 200) {
        expect(line).toMatchObject({ status: 400, error_type: 'invalid_request_error' });
        expect(line.tokens).toBeUndefined();
        return;
      }
      const message = a.decision.body as AnthropicMessage;
      // Exactly what the simulator sent.
      expect(line.response_model, why).toBe(SERVED);
      expect(line.tokens, why).toEqual({
        input: message.usage.input_tokens,
        output: message.usage.output_tokens,
        cache_read: message.usage.cache_read_input_tokens,
        cache_creation: message.usage.cache_creation_input_tokens,
      });
      const sdk = results[i];
      if (sdk !== undefined) expect(sdk).toMatchObject(message);
      if (a.stream === undefined) {
        expect(line.stream).toBeUndefined();
        expect(line.first_event_ms).toBeUndefined();
        return;
      }
      const s = a.stream as Required<NonNullable<SimulatorAnswer['stream']>>;
      expect(line.stream).toBe(true);
      // The simulator held the first event back by the set delay; the client cannot have seen it earlier,
      // and saw it before the SDK handed the first text on.
      expect(s.firstEventAtMs - s.headersAtMs).toBeGreaterThanOrEqual(FIRST_EVENT_DELAY_MS);
      const first = line.first_event_ms as number;
      // Headers and first event apart, by at least what separates the first event's sending from the headers'
      // arrival under the instrumentation (m.headers; its clock starts at most fetchCalled − start before the
      // test's). Not `≥ FIRST_EVENT_DELAY_MS`: on a loaded machine the headers may be handled late and the
      // first event at once, which narrows the gap the client can see.
      expect(first - line.latency_ms, why).toBeGreaterThanOrEqual(s.firstEventAtMs - m.headers - (m.fetchCalled - m.start) - 0.001);
      expect(first, why).toBeGreaterThanOrEqual(s.firstEventAtMs - m.fetchCalled - 0.001);
      expect(first, why).toBeLessThanOrEqual((m.firstText as number) - m.start + 0.001);
      expect(line.duration_ms as number, why).toBeGreaterThanOrEqual(s.endAtMs - m.fetchCalled - 0.001);
    });

    const text = metricsText([zp]);
    const chat = 'gen_ai_operation_name="chat",gen_ai_provider_name="anthropic",gen_ai_request_model="claude-sonnet"';
    const ok = lines.filter((l) => l.status === 200);
    const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}()+.[\]]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
    const served = `${chat},gen_ai_response_model="${SERVED}"`;
    expect(value(`gen_ai_client_operation_duration_seconds_count{${served},error_type=""}`)).toBe(ok.length);
    expect(value(`gen_ai_client_operation_duration_seconds_sum{${served},error_type=""}`)).toBeCloseTo(ok.reduce((n, l) => n + (l.duration_ms as number), 0) / 1000, 4);
    expect(value(`gen_ai_client_operation_duration_seconds_count{${chat},gen_ai_response_model="",error_type="invalid_request_error"}`)).toBe(1);
    expect(value(`gen_ai_server_time_to_first_token_seconds_count{${served}}`)).toBe(streams);
    expect(value(`gen_ai_server_time_to_first_token_seconds_sum{${served}}`)).toBeCloseTo(ok.reduce((n, l) => n + (l.first_event_ms ?? 0), 0) / 1000, 4);
    const sumOf = (f: (t: NonNullable<Line['tokens']>) => number) => ok.reduce((n, l) => n + f(l.tokens as NonNullable<Line['tokens']>), 0);
    expect(value(`gen_ai_client_token_usage_sum{${served},gen_ai_token_type="input"}`)).toBe(sumOf((t) => t.input + t.cache_read + t.cache_creation));
    expect(value(`gen_ai_client_token_usage_sum{${served},gen_ai_token_type="output"}`)).toBe(sumOf((t) => t.output));
    expect(value(`gen_ai_client_token_usage_count{${served},gen_ai_token_type="output"}`)).toBe(ok.length);
    expect(value(`zero_plane_client_tokens_total{type="cache_read",model="${SERVED}"}`)).toBe(sumOf((t) => t.cache_read));
    expect(sumOf((t) => t.cache_read)).toBeGreaterThan(0); // the cached answer read its prompt from the cache
    expect(value('zero_plane_client_stream_refusals_total{reason="zero_plane_does_not_stream"}')).toBe(1);
    expect(value('zero_plane_client_instrumentation_errors_total{stage="record"}')).toBe(0);
  });

  it('passes a stream through byte for byte', async () => {
    answers.length = 0;
    const zp = instrumentFetch(fetch, { warn: () => undefined });
    const response = await zp(`${simulator.url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...params(), stream: true }) });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const received = new Uint8Array(await response.arrayBuffer());
    const sent = answers[0]?.stream?.body;
    expect(sent).toBeDefined();
    expect(Buffer.from(received).equals(Buffer.from(sent as string, 'utf8'))).toBe(true);
    expect(response.url).toBe(`${simulator.url}/v1/messages`);
  });

  it('a body nobody reads is recorded after maxWait, or at close(); observeBodies: false records at the headers', async () => {
    const call = (zp: ReturnType<typeof instrumentFetch>) => zp(`${simulator.url}/v1/messages`, { method: 'POST', body: JSON.stringify(params()) });
    const waited = instrumentFetch(fetch, { warn: () => undefined, observeBodies: { maxWait: 50 } });
    await call(waited);
    expect(waited.signals()?.window.requests).toBe(0);
    await new Promise((r) => setTimeout(r, 120));
    expect(waited.signals()?.window.requests).toBe(1);

    const closed = instrumentFetch(fetch, { warn: () => undefined });
    await call(closed);
    expect(closed.signals()?.window.requests).toBe(0);
    await closed.close();
    expect(closed.signals()?.window.requests).toBe(1);

    const off = instrumentFetch(fetch, { warn: () => undefined, observeBodies: false });
    await call(off);
    expect(off.signals()?.window.requests).toBe(1);
    expect(metricsText([off])).not.toMatch(/^gen_ai_client_token_usage_count/m);
  });
});
