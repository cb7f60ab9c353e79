// The simulator's rules, as a pure function of the request, the profile, the faults and a random source:
// which layer answers, with which headers and status, after how long. The HTTP server only waits and writes.
import type { Faults } from './faults.js';
import type { JitterLatency, SimulatorProfile, TailLatency } from './profile.js';
import {
  anthropicError,
  CACHED_HEADER,
  CONTEXT_TOO_LONG,
  DELAY_PROFILE_HEADER,
  DOWNGRADE_HEADER,
  LAYER_HEADER,
  OPT_IN_HEADER,
  OPT_IN_VALUE,
  REQUEST_ID_HEADER,
  type AnthropicError,
  type AnthropicMessage,
} from './protocol.js';
import { randomDraws, standardNormal, type Draws, type Rng } from './random.js';
import { estimateTokens, inputTokens, readMessagesRequest, systemTokens, type MessagesRequest } from './request.js';

export interface DecisionInput {
  /** The raw request body. */
  body: string;
  /** The opt-in request header exactly as received; undefined when absent. */
  optIn: string | undefined;
  /** How many times in a row this exact body has arrived, this one included (1 = new). */
  repeat: number;
}

/**
 * - `fast`: served by the Zero-Plane layer;
 * - `fallback`: served by the standard layer (not opted in, opt-in not exact, or a hitRateDrop fault);
 * - `downgraded`: opted in but too long for the fast layer, served by the standard layer;
 * - `rejected`: too long for the fast layer in strict mode (429);
 * - `invalid`: a 400 (malformed JSON, stream: true outside the stream mode or on the Zero-Plane layer, a
 *   body that is not a Messages request).
 */
export type Outcome = 'fast' | 'fallback' | 'downgraded' | 'rejected' | 'invalid';

export interface Decision {
  outcome: Outcome;
  status: number;
  headers: Record<string, string>;
  body: AnthropicMessage | AnthropicError;
  /** How long the whole answer should take, in milliseconds. */
  delayMs: number;
  cached: boolean;
  /** The answer goes out as server-sent events (stream mode, standard layer): stream-response.ts. */
  stream: boolean;
}

export interface DecisionContext {
  profile: SimulatorProfile;
  faults: Faults;
  /** Latency jitter, ids, and the yes/no draws when `draws` is not given. */
  rng: Rng;
  /** The yes/no draws (degraded, warm-up, hitRateDrop); default independent draws from rng. */
  draws?: Draws;
}

export function decide(input: DecisionInput, ctx: DecisionContext): Decision {
  const { profile, faults, rng } = ctx;
  const draws = ctx.draws ?? randomDraws(rng);
  const requestId = `req_sim_${randomId(rng)}`;
  const read = readMessagesRequest(input.body, profile.stream.enabled);
  if (!read.ok) return invalid(requestId, read.message);
  const request = read.request;
  const optedIn = input.optIn === OPT_IN_VALUE;
  const stream = request.stream === true;
  // The article's rule: Zero-Plane does not stream. An opted-in stream is refused, not served elsewhere.
  if (stream && optedIn) return invalid(requestId, ZERO_PLANE_NO_STREAM);
  const tooLong = optedIn ? contextTooLong(request, profile) : undefined;

  if (tooLong !== undefined && profile.mode === 'strict') {
    return {
      outcome: 'rejected',
      status: 429,
      headers: {
        [REQUEST_ID_HEADER]: requestId,
        [DOWNGRADE_HEADER]: CONTEXT_TOO_LONG,
        [DELAY_PROFILE_HEADER]: `mode=${profile.mode}`,
      },
      body: anthropicError('rate_limit_error', `${CONTEXT_TOO_LONG}: ${tooLong}; strict mode refuses instead of falling back to the standard layer`),
      delayMs: 0,
      cached: false,
      stream: false,
    };
  }

  const cached = input.repeat >= profile.cacheAfter;
  const headers: Record<string, string> = { [REQUEST_ID_HEADER]: requestId };
  let outcome: Outcome;
  let delayMs: number;
  if (optedIn && tooLong === undefined && !draws.chance('hitRateDrop', faults.hitRateDrop)) {
    outcome = 'fast';
    const degraded = draws.chance('degraded', faults.degradedRate);
    const efficiency = Math.max(0, profile.warmupEfficiency - faults.warmupEfficiencyDrop);
    const warm = cached || draws.chance('warmup', efficiency);
    headers[LAYER_HEADER] = profile.fastLayerId;
    headers[DELAY_PROFILE_HEADER] = `warmup=${warm ? 'hit' : 'miss'}, degraded=${degraded ? '?1' : '?0'}, mode=${profile.mode}`;
    delayMs = jittered(rng, profile.fastLatency) * (1 + faults.latencyDriftRatio);
  } else {
    outcome = tooLong === undefined ? 'fallback' : 'downgraded';
    if (profile.fallbackLayerId !== null) headers[LAYER_HEADER] = profile.fallbackLayerId;
    if (tooLong !== undefined) headers[DOWNGRADE_HEADER] = CONTEXT_TOO_LONG;
    delayMs = longTailed(rng, profile.fallbackLatency);
  }
  if (cached) {
    headers[CACHED_HEADER] = 'true';
    delayMs = jittered(rng, profile.cachedLatency);
  }
  return { outcome, status: 200, headers, body: message(request, profile, cached, rng), delayMs: Math.max(0, delayMs), cached, stream };
}

/** The 400 of a stream the Zero-Plane layer was asked for (stream mode): it names the rule and the way out. */
export const ZERO_PLANE_NO_STREAM = `stream: the Zero-Plane layer does not stream; send "stream": false, or leave out the ${OPT_IN_HEADER} opt-in to stream from the standard layer`;

function invalid(requestId: string, text: string): Decision {
  return {
    outcome: 'invalid',
    status: 400,
    headers: { [REQUEST_ID_HEADER]: requestId },
    body: anthropicError('invalid_request_error', text),
    delayMs: 0,
    cached: false,
    stream: false,
  };
}

/** Why the request is too long for the fast layer, or undefined when it fits. */
export function contextTooLong(r: MessagesRequest, profile: SimulatorProfile): string | undefined {
  if (r.messages.length > profile.maxMessages) return `${r.messages.length} messages (the fast layer takes at most ${profile.maxMessages})`;
  const tokens = systemTokens(r);
  if (tokens > profile.maxSystemTokens) return `system prompt of about ${tokens} tokens (the fast layer takes at most ${profile.maxSystemTokens})`;
  return undefined;
}

/** mean ± jitter: a normal with σ = jitter / 2, clipped to ± jitter. */
export function jittered(rng: Rng, l: JitterLatency): number {
  const z = Math.max(-2, Math.min(2, standardNormal(rng)));
  return Math.max(0, l.meanMs + (z * l.jitterMs) / 2);
}

/** Lognormal around the median, capped at maxMs. */
export function longTailed(rng: Rng, l: TailLatency): number {
  return Math.min(l.maxMs, l.medianMs * Math.exp(l.sigma * standardNormal(rng)));
}

function message(r: MessagesRequest, profile: SimulatorProfile, cached: boolean, rng: Rng): AnthropicMessage {
  const text = 'This is a simulated reply from the Zero-Plane simulator.';
  const input = inputTokens(r);
  // A cached answer read its prompt from the cache: those tokens are cache reads, as the API counts them.
  return {
    id: `msg_sim_${randomId(rng)}`,
    type: 'message',
    role: 'assistant',
    model: profile.servedModels[r.model] ?? r.model,
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: cached ? 0 : input, output_tokens: estimateTokens(text.length), cache_creation_input_tokens: 0, cache_read_input_tokens: cached ? input : 0 },
  };
}

const ID_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function randomId(rng: Rng): string {
  let id = '';
  for (let i = 0; i < 20; i++) id += ID_ALPHABET[Math.floor(rng() * ID_ALPHABET.length)];
  return id;
}
