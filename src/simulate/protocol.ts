// The wire names the simulator speaks: the header contract of a Zero-Plane deployment (docs/contract.md §2) and the
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
 * With the simulator's reportAnswerTime (the demo): `server-timing: answer;dur=MS`, the time the simulated
 * layer decided to take for this answer.
 */
export const SERVER_TIMING_HEADER = 'server-timing';
const ANSWER_METRIC = 'answer';

export function answerTiming(ms: number): string {
  return `${ANSWER_METRIC};dur=${ms.toFixed(3)}`;
}

/** The answer time a response reports, in ms; undefined when it reports none. */
export function reportedAnswerMs(serverTiming: string | string[] | undefined): number | undefined {
  const text = Array.isArray(serverTiming) ? serverTiming.join(', ') : (serverTiming ?? '');
  const m = new RegExp(`(?:^|,)\\s*${ANSWER_METRIC}\\s*;\\s*dur=([0-9.]+)`).exec(text);
  return m === null ? undefined : Number(m[1]);
}

export type ThrottleMode = 'strict' | 'balanced' | 'adaptive';
export const THROTTLE_MODES: readonly ThrottleMode[] = ['strict', 'balanced', 'adaptive'];

export type AnthropicErrorType = 'invalid_request_error' | 'not_found_error' | 'request_too_large' | 'rate_limit_error' | 'api_error';

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
  usage: AnthropicUsage;
}

/** The Messages API's usage object (cache fields as the API sends them, 0 when nothing was cached). */
export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export function anthropicError(type: AnthropicErrorType, message: string): AnthropicError {
  return { type: 'error', error: { type, message } };
}
