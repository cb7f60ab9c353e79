// A Messages answer as the API streams it (server-sent events): message_start (the message with no
// content yet, input and cache usage, output_tokens 1), content_block_start, ping, the text in
// content_block_delta events, content_block_stop, message_delta (stop reason and the final output_tokens),
// message_stop. Pure: the simulator writes these with its delays, a test compares what the SDK assembled.
import type { AnthropicMessage } from './protocol.js';

export interface StreamEvent {
  /** The SSE `event:` name, which is also the data's `type`. */
  event: string;
  data: Record<string, unknown>;
}

/** The events of `message`, its text split into `deltas` pieces (fewer when the text is shorter). */
export function streamEvents(message: AnthropicMessage, deltas: number): StreamEvent[] {
  const text = message.content.map((c) => c.text).join('');
  const { usage } = message;
  const start: StreamEvent = {
    event: 'message_start',
    data: {
      type: 'message_start',
      message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
    },
  };
  const pieces = splitText(text, deltas);
  return [
    start,
    { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
    { event: 'ping', data: { type: 'ping' } },
    ...pieces.map((piece) => ({ event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: piece } } })),
    { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
    {
      event: 'message_delta',
      data: { type: 'message_delta', delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence }, usage: { output_tokens: usage.output_tokens } },
    },
    { event: 'message_stop', data: { type: 'message_stop' } },
  ];
}

/** One event as it goes on the wire. */
export function sseText(e: StreamEvent): string {
  return `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`;
}

/** `text` in `n` consecutive pieces of about equal length, none empty (one piece for an empty text). */
function splitText(text: string, n: number): string[] {
  const count = Math.max(1, Math.min(n, text.length));
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(text.slice(Math.floor((i * text.length) / count), Math.floor(((i + 1) * text.length) / count)));
  return out;
}
