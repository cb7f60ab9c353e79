// Reads a `POST /v1/messages` body the way the Messages API does, far enough to route it: the model, the
// conversation length, the system prompt size and the stream flag. Unknown fields are ignored.
import { z } from 'zod';
import { describeIssues } from './profile.js';

const block = z.looseObject({ type: z.string(), text: z.string().optional() });
const content = z.union([z.string(), z.array(block)]);

export const messagesRequestSchema = z.looseObject({
  model: z.string().min(1),
  max_tokens: z.number().int().positive().optional(),
  messages: z.array(z.looseObject({ role: z.enum(['user', 'assistant']), content })).min(1),
  system: content.optional(),
  stream: z.boolean().optional(),
});

export type MessagesRequest = z.output<typeof messagesRequestSchema>;

export type ReadResult = { ok: true; request: MessagesRequest } | { ok: false; kind: 'malformed_json' | 'stream' | 'invalid'; message: string };

/** Without the simulator's stream mode, `stream: true` is refused (the article's rule: Zero-Plane does not stream). */
export const STREAM_UNSUPPORTED = 'stream: streaming is not supported by this endpoint; send "stream": false or omit the field';

/** `streams`: whether `stream: true` is a request to answer (the simulator's stream mode) rather than a 400. */
export function readMessagesRequest(text: string, streams = false): ReadResult {
  if (text.trim() === '') return { ok: false, kind: 'malformed_json', message: 'request body is empty: expected a JSON object' };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    return { ok: false, kind: 'malformed_json', message: `request body is not valid JSON: ${(err as Error).message}` };
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { ok: false, kind: 'invalid', message: 'request body must be a JSON object' };
  }
  if ((body as { stream?: unknown }).stream === true && !streams) return { ok: false, kind: 'stream', message: STREAM_UNSUPPORTED };
  const parsed = messagesRequestSchema.safeParse(body);
  if (!parsed.success) return { ok: false, kind: 'invalid', message: describeIssues(parsed.error) };
  return { ok: true, request: parsed.data };
}

/** Token estimate used for routing and usage: characters / 4, rounded up. */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

export function textLength(c: z.output<typeof content> | undefined): number {
  if (c === undefined) return 0;
  if (typeof c === 'string') return c.length;
  return c.reduce((n, b) => n + (b.text?.length ?? 0), 0);
}

export function systemTokens(r: MessagesRequest): number {
  return estimateTokens(textLength(r.system));
}

export function inputTokens(r: MessagesRequest): number {
  return estimateTokens(textLength(r.system) + r.messages.reduce((n, m) => n + textLength(m.content), 0));
}
