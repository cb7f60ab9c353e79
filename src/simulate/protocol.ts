// The wire names the simulator speaks: the header contract of a Zero-Plane deployment (SPEC §2) and the
// Anthropic Messages API shapes it imitates.

export const MESSAGES_PATH = '/v1/messages';
export const FAULTS_PATH = '/admin/faults';
export const HEALTH_PATH = '/-/healthy';

/** Request header that opts a request into the Zero-Plane layer; only this exact value counts. */
export const OPT_IN_HEADER = 'x-anthropic-experimental';
export const OPT_IN_VALUE = 'zero-plane-2024';

export const LAYER_HEADER = 'x-anthropic-layer-id';
export const DELAY_PROFILE_HEADER = 'x-anthropic-delay-profile';
export const CACHED_HEADER = 'x-anthropic-cached';
export const DOWNGRADE_HEADER = 'x-anthropic-downgrade-reason';
export const REQUEST_ID_HEADER = 'request-id';

export const CONTEXT_TOO_LONG = 'context_too_long';

/**
 * With reportLateness: the request's send time (epoch ms, from the same machine's clock) that the answer
 * is due `delay` after, and how late the answer went out (`server-timing: late;dur=MS`).
 */
export const SENT_AT_HEADER = 'x-simulator-sent-at';

export const LATENESS_HEADER = 'server-timing';
const LATENESS_METRIC = 'late';

export function latenessTiming(lateMs: number): string {
  return `${LATENESS_METRIC};dur=${lateMs.toFixed(3)}`;
}

/** The lateness an answer reports, in ms; 0 when it reports none. */
export function reportedLatenessMs(serverTiming: string | string[] | undefined): number {
  const text = Array.isArray(serverTiming) ? serverTiming.join(', ') : (serverTiming ?? '');
  const m = new RegExp(`(?:^|,)\\s*${LATENESS_METRIC}\\s*;\\s*dur=([0-9.]+)`).exec(text);
  return m === null ? 0 : Number(m[1]);
}

export type ThrottleMode = 'strict' | 'balanced' | 'adaptive';
export const THROTTLE_MODES: readonly ThrottleMode[] = ['strict', 'balanced', 'adaptive'];

export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error';

export interface AnthropicError {
  type: 'error';
  error: { type: AnthropicErrorType; message: string };
}

export interface AnthropicMessage {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: { type: 'text'; text: string }[];
  stop_reason: 'end_turn';
  stop_sequence: null;
  usage: { input_tokens: number; output_tokens: number };
}

export function anthropicError(type: AnthropicErrorType, message: string): AnthropicError {
  return { type: 'error', error: { type, message } };
}
