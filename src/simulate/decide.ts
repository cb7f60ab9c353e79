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
  OPT_IN_VALUE,
  REQUEST_ID_HEADER,
  type AnthropicError,
  type AnthropicMessage,
} from './protocol.js';
import { randomDraws, standardNormal, type Draws, type Rng } from './random.js';
import { inputTokens, readMessagesRequest, systemTokens, type MessagesRequest } from './request.js';

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
 * - `invalid`: a 400 (malformed JSON, stream: true, a body that is not a Messages request).
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
  const read = readMessagesRequest(input.body);
  if (!read.ok) {
    return {
      outcome: 'invalid',
      status: 400,
      headers: { [REQUEST_ID_HEADER]: requestId },
      body: anthropicError('invalid_request_error', read.message),
      delayMs: 0,
      cached: false,
    };
  }
  const request = read.request;
  const optedIn = input.optIn === OPT_IN_VALUE;
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
  return { outcome, status: 200, headers, body: message(request, rng), delayMs: Math.max(0, delayMs), cached };
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

function message(r: MessagesRequest, rng: Rng): AnthropicMessage {
  const text = 'This is a simulated reply from the Zero-Plane simulator.';
  return {
    id: `msg_sim_${randomId(rng)}`,
    type: 'message',
    role: 'assistant',
    model: r.model,
    content: [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: inputTokens(r), output_tokens: Math.ceil(text.length / 4) },
  };
}

const ID_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

function randomId(rng: Rng): string {
  let id = '';
  for (let i = 0; i < 20; i++) id += ID_ALPHABET[Math.floor(rng() * ID_ALPHABET.length)];
  return id;
}
