// The simulator's stream mode as rules: off, every "stream": true is a 400; on, the standard layer streams
// and an opted-in stream is still refused (Zero-Plane does not stream); the events are Anthropic's sequence,
// their text is the message's and their usage its usage.
import { describe, expect, it } from 'vitest';
import { decide, ZERO_PLANE_NO_STREAM } from '../../../src/simulate/decide.js';
import { NO_FAULTS } from '../../../src/simulate/faults.js';
import { resolveProfile } from '../../../src/simulate/profile.js';
import type { AnthropicMessage } from '../../../src/simulate/protocol.js';
import { createRng } from '../../../src/simulate/random.js';
import { streamEvents } from '../../../src/simulate/stream-response.js';

const body = JSON.stringify({ model: 'claude-sonnet', max_tokens: 8, stream: true, messages: [{ role: 'user', content: 'hi there' }] });
const run = (enabled: boolean, optIn: string | undefined) =>
  decide({ body, optIn, repeat: 1 }, { profile: resolveProfile({ stream: { enabled }, servedModels: { 'claude-sonnet': 'claude-sonnet-4-x' } }), faults: { ...NO_FAULTS }, rng: createRng(1) });

describe('simulator stream mode', () => {
  it('off: a stream is a 400 whatever the opt-in', () => {
    for (const optIn of [undefined, 'zero-plane-2024']) expect(run(false, optIn)).toMatchObject({ status: 400, outcome: 'invalid', stream: false });
  });

  it('on: the standard layer streams, an opted-in stream gets the Zero-Plane 400', () => {
    expect(run(true, undefined)).toMatchObject({ status: 200, outcome: 'fallback', stream: true });
    const refused = run(true, 'zero-plane-2024');
    expect(refused).toMatchObject({ status: 400, stream: false, body: { error: { type: 'invalid_request_error', message: ZERO_PLANE_NO_STREAM } } });
  });

  it('streams Anthropic’s event sequence with the message’s text, usage and served model', () => {
    const message = run(true, undefined).body as AnthropicMessage;
    expect(message.model).toBe('claude-sonnet-4-x');
    const events = streamEvents(message, 3);
    expect(events.map((e) => e.event)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const text = events
      .filter((e) => e.event === 'content_block_delta')
      .map((e) => (e.data.delta as { text: string }).text)
      .join('');
    expect(text).toBe(message.content[0]?.text);
    expect((events[0]?.data.message as AnthropicMessage).usage).toEqual({ ...message.usage, output_tokens: 1 });
    expect(events[7]?.data.usage).toEqual({ output_tokens: message.usage.output_tokens });
  });
});
