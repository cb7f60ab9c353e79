// `report`'s `tokens` key: the token usage a gateway logs (input.fields.tokens*, here a LiteLLM-style
// `usage` object mapped by config; the default preset's `tokens.*`, what the client writes), summed as
// zero_plane_tokens_total counts it, overall and per model, worked out here from the lines written.
// Absent when no record carried a count, so reports of inputs without usage are unchanged.
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import { Pipeline } from '../../../src/pipeline.js';
import { buildReport } from '../../../src/report/build-report.js';
import { formatText } from '../../../src/report/format-text.js';

const MAPPED = `input:
  fields:
    tokensInput: usage.prompt_tokens
    tokensOutput: usage.completion_tokens
    tokensCacheRead: usage.cache_read_input_tokens
`;

function line(model: string, usage: Record<string, unknown> | undefined): string {
  return JSON.stringify({
    ts: '2026-11-01T00:00:00Z',
    latency_ms: 180,
    status: 200,
    model,
    route: '/v1/messages',
    response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1', 'x-anthropic-delay-profile': 'degraded=?0' },
    request_headers: { 'x-anthropic-experimental': 'zero-plane-2024' },
    ...(usage === undefined ? {} : { usage }),
  });
}

function report(yaml: string, lines: string[]) {
  const config = parseConfig(yaml, 'tokens.yml');
  const pipeline = new Pipeline(config, { keepTotals: true });
  for (const l of lines) pipeline.line(l, 'gateway.log');
  pipeline.finish();
  return buildReport(pipeline, config);
}

describe('report tokens', () => {
  it('sums the logged counts by type and by model; a line without usage adds nothing', () => {
    const r = report(MAPPED, [
      line('claude-a', { prompt_tokens: 100, completion_tokens: 20, cache_read_input_tokens: 5 }),
      line('claude-b', { prompt_tokens: 7, completion_tokens: 3 }),
      line('claude-a', { prompt_tokens: 50, completion_tokens: 10, cache_read_input_tokens: 0 }),
      line('claude-b', undefined),
      // Not a count (a string, a negative number): no count, as zero_plane_tokens_total reads it.
      line('claude-b', { prompt_tokens: '9', completion_tokens: -1 }),
    ]);
    expect(r.records).toBe(5);
    expect(r.tokens).toEqual({
      total: { input: 157, output: 33, cache_read: 5, cache_creation: 0 },
      byModel: {
        'claude-a': { input: 150, output: 30, cache_read: 5, cache_creation: 0 },
        'claude-b': { input: 7, output: 3, cache_read: 0, cache_creation: 0 },
      },
    });
    expect(formatText(r)).toContain('\ntokens: input 157, output 33, cache_read 5, cache_creation 0 (2 models)\n');
    // As JSON carries it: the key is there, the rest of the report as before.
    expect(JSON.parse(JSON.stringify(r)).tokens.total.input).toBe(157);
  });

  it("reads the default preset's token fields (what zero-plane-exporter/client writes)", () => {
    const r = report('{}\n', [JSON.stringify({ ...JSON.parse(line('claude-c', undefined)), tokens: { input: 12, output: 34, cache_read: 0, cache_creation: 56 } })]);
    expect(r.tokens).toEqual({ total: { input: 12, output: 34, cache_read: 0, cache_creation: 56 }, byModel: { 'claude-c': { input: 12, output: 34, cache_read: 0, cache_creation: 56 } } });
  });

  it('is absent when no line logged usage, in JSON and in text', () => {
    const r = report(MAPPED, [line('claude-a', undefined), line('claude-b', undefined)]);
    expect(r.records).toBe(2);
    expect(Object.hasOwn(r, 'tokens')).toBe(false);
    expect(formatText(r)).not.toMatch(/^tokens:/m);
  });
  it('orders models by code unit, the same under any locale (upper case before lower, é after z)', () => {
    const models = ['claude-é', 'claude-b', 'Claude-B', 'claude-a', 'claude-z'];
    const r = report(
      MAPPED,
      models.map((m) => line(m, { prompt_tokens: 1, completion_tokens: 1 })),
    );
    // localeCompare (ICU, en) would give claude-a, claude-b, Claude-B, claude-é, claude-z.
    expect(Object.keys(r.tokens?.byModel ?? {})).toEqual(['Claude-B', 'claude-a', 'claude-b', 'claude-z', 'claude-é']);
    expect(Object.keys(r.statusClasses)).toEqual(['2xx']);
  });
});
