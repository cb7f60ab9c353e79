// The OpenTelemetry GenAI families under their Prometheus names: bounded model labels (the config's
// labelValueLimit, the rest __other__), the semconv's input token count (cache included), and what a
// failed call feeds (its duration only); each model value replaced or cut counted, through instrumentFetch,
// in zero_plane_client_label_overflow_total{label,reason}.
import { describe, expect, it } from 'vitest';
import { GenAiMetrics, type GenAiOperation } from '../../../src/client/genai-metrics.js';
import { metricsText } from '../../../src/client/exposition.js';
import { instrumentFetch } from '../../../src/client/instrument-fetch.js';

const op = (over: Partial<GenAiOperation>): GenAiOperation => ({
  operation: 'chat',
  requestModel: 'claude-a',
  responseModel: 'claude-a-1',
  errorType: '',
  durationSeconds: 0.5,
  timeToFirstTokenSeconds: 0.2,
  tokens: { input: 10, output: 4, cacheRead: 3, cacheCreation: 2 },
  ...over,
});

describe('GenAiMetrics', () => {
  it('keeps at most labelValueLimit model values per label, the rest __other__', () => {
    const m = new GenAiMetrics({ provider: 'anthropic', labelValueLimit: 2, labelValueMaxBytes: 128 });
    for (const model of ['m1', 'm2', 'm3', 'm4']) m.observe(op({ requestModel: model, responseModel: `${model}-served` }));
    const text = metricsText([{ families: () => m.families() }]);
    const values = (label: string) => [...new Set([...text.matchAll(new RegExp(`${label}="([^"]*)"`, 'g'))].map((x) => x[1]))].sort();
    expect(values('gen_ai_request_model')).toEqual(['__other__', 'm1', 'm2']);
    expect(values('gen_ai_response_model')).toEqual(['__other__', 'm1-served', 'm2-served']);
    expect(text).toMatch(
      /^gen_ai_client_operation_duration_seconds_count\{gen_ai_operation_name="chat",gen_ai_provider_name="anthropic",gen_ai_request_model="__other__",gen_ai_response_model="__other__",error_type=""\} 2$/m,
    );
  });

  it('counts input tokens with the cache (semconv), the Messages API split in zero_plane_client_tokens_total', () => {
    const m = new GenAiMetrics({ provider: 'anthropic', labelValueLimit: 50, labelValueMaxBytes: 128 });
    m.observe(op({}));
    const text = metricsText([{ families: () => m.families() }]);
    expect(text).toMatch(/^gen_ai_client_token_usage_sum\{[^}]*gen_ai_token_type="input"\} 15$/m);
    expect(text).toMatch(/^gen_ai_client_token_usage_sum\{[^}]*gen_ai_token_type="output"\} 4$/m);
    expect(text).toMatch(/^gen_ai_server_time_to_first_token_seconds_sum\{[^}]*\} 0\.2$/m);
    for (const [type, n] of [
      ['input', 10],
      ['output', 4],
      ['cache_read', 3],
      ['cache_creation', 2],
    ] as const)
      expect(text).toMatch(new RegExp(`^zero_plane_client_tokens_total\\{type="${type}",model="claude-a-1"\\} ${n}$`, 'm'));
  });

  it('a failed call feeds its duration with its error type, and neither tokens nor time to first token', () => {
    const m = new GenAiMetrics({ provider: 'anthropic', labelValueLimit: 50, labelValueMaxBytes: 128 });
    m.observe(op({ errorType: 'overloaded_error' }));
    const text = metricsText([{ families: () => m.families() }]);
    expect(text).toMatch(/^gen_ai_client_operation_duration_seconds_count\{[^}]*error_type="overloaded_error"\} 1$/m);
    expect(text).not.toMatch(/^gen_ai_client_token_usage_count/m);
    expect(text).not.toMatch(/^gen_ai_server_time_to_first_token_seconds_count/m);
    expect(text).not.toMatch(/^zero_plane_client_tokens_total\{/m);
  });

  it('tells onOverflow of each model value it cuts (too_long) or replaces by __other__ (too_many_values), by label', () => {
    const overflows: string[] = [];
    const m = new GenAiMetrics({ provider: 'anthropic', labelValueLimit: 2, labelValueMaxBytes: 16, onOverflow: (label, reason) => overflows.push(`${label} ${reason}`) });
    m.observe(op({ requestModel: 'claude-a-very-long-model-name', responseModel: 'm1' }));
    m.observe(op({ requestModel: 'claude-a-very-long-model-name', responseModel: 'm2' }));
    m.observe(op({ requestModel: 'm3', responseModel: 'm3' }));
    m.observe(op({ requestModel: 'm4', responseModel: 'm1' }));
    expect(overflows).toEqual(['gen_ai_request_model too_long', 'gen_ai_request_model too_long', 'gen_ai_response_model too_many_values', 'gen_ai_request_model too_many_values']);
  });
});

describe('instrumentFetch and the GenAI label bounds', () => {
  /** A Messages API answering with the requested model plus a suffix as the served one. */
  const api = async (_input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const model = (JSON.parse(String(init?.body)) as { model: string }).model;
    const body = { id: 'msg_1', type: 'message', role: 'assistant', model: `${model}-1`, content: [], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 2 } };
    return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  const overflowLines = (text: string) => text.split('\n').filter((l) => l.startsWith('zero_plane_client_label_overflow_total{'));

  it('counts each model value replaced or cut in zero_plane_client_label_overflow_total{label,reason}, the series there from the start', async () => {
    const zp = instrumentFetch(api, { warn: () => undefined, config: { metrics: { labelValueLimit: 1, labelValueMaxBytes: 16 } } });
    try {
      expect(overflowLines(metricsText([zp]))).toEqual([
        'zero_plane_client_label_overflow_total{label="gen_ai_request_model",reason="too_many_values"} 0',
        'zero_plane_client_label_overflow_total{label="gen_ai_request_model",reason="too_long"} 0',
        'zero_plane_client_label_overflow_total{label="gen_ai_response_model",reason="too_many_values"} 0',
        'zero_plane_client_label_overflow_total{label="gen_ai_response_model",reason="too_long"} 0',
      ]);
      // The first model is longer than 16 bytes: cut, and admitted as the one value; the next two are past the limit.
      for (const model of ['claude-a-very-long-model-name', 'claude-b', 'claude-c']) {
        const res = await zp('http://api.invalid/v1/messages', { method: 'POST', body: JSON.stringify({ model, max_tokens: 1, messages: [] }) });
        await res.text();
      }
      const text = metricsText([zp]);
      expect(overflowLines(text)).toEqual([
        'zero_plane_client_label_overflow_total{label="gen_ai_request_model",reason="too_many_values"} 2',
        'zero_plane_client_label_overflow_total{label="gen_ai_request_model",reason="too_long"} 1',
        'zero_plane_client_label_overflow_total{label="gen_ai_response_model",reason="too_many_values"} 2',
        'zero_plane_client_label_overflow_total{label="gen_ai_response_model",reason="too_long"} 1',
      ]);
      expect(text).toMatch(/^gen_ai_client_operation_duration_seconds_count\{[^}]*gen_ai_request_model="__other__",gen_ai_response_model="__other__"[^}]*\} 2$/m);
    } finally {
      await zp.close();
    }
  });
});
