// The OpenTelemetry GenAI families under their Prometheus names: bounded model labels (the config's
// labelValueLimit, the rest __other__), the semconv's input token count (cache included), and what a
// failed call feeds (its duration only).
import { describe, expect, it } from 'vitest';
import { GenAiMetrics, type GenAiOperation } from '../../../src/client/genai-metrics.js';
import { metricsText } from '../../../src/client/exposition.js';

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
});
