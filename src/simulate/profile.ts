// How the simulated deployment behaves when nothing is wrong: latencies, limits, mode. Every number is an
// option; the defaults are the ones the issue describes (fast layer 120 ms ± 5 ms, fallback ≈ 300 ms with a
// long tail, more than 8 messages or a system prompt over 1200 tokens is too long for the fast layer).
import { z } from 'zod';
import { THROTTLE_MODES, type ThrottleMode } from './protocol.js';

/** A tight latency: mean ± jitter (a normal with σ = jitter / 2, clipped to ± jitter). */
export interface JitterLatency {
  meanMs: number;
  jitterMs: number;
}

/** A long-tailed latency: lognormal with the given median and σ of the log, capped at maxMs. */
export interface TailLatency {
  medianMs: number;
  sigma: number;
  maxMs: number;
}

export interface SimulatorProfile {
  mode: ThrottleMode;
  fastLatency: JitterLatency;
  fallbackLatency: TailLatency;
  /** Answers for the Nth identical body in a row (x-anthropic-cached: true). */
  cachedLatency: JitterLatency;
  /** Share of fast-layer answers reporting warmup=hit before any fault (0.917 is the baseline of docs/contract.md §4). */
  warmupEfficiency: number;
  fastLayerId: string;
  /** The layer id fallbacks report; null omits the header (also "not Zero-Plane"). */
  fallbackLayerId: string | null;
  /** More messages than this is too long for the fast layer. */
  maxMessages: number;
  /** A system prompt estimated above this many tokens (characters / 4) is too long for the fast layer. */
  maxSystemTokens: number;
  /** The Nth identical request body in a row (and every one after it) is answered from the cache. */
  cacheAfter: number;
  /** Largest request body accepted, in bytes. */
  bodyLimitBytes: number;
  /** How `stream: true` is answered (stream-response.ts). */
  stream: StreamProfile;
  /** The model each answer names, by requested model (a dated id for an alias, say); unlisted: the requested one. */
  servedModels: Readonly<Record<string, string>>;
}

/**
 * The stream mode. Off (the default), `stream: true` is a 400 everywhere. On, the standard layer answers it
 * with Anthropic's server-sent events, and an opted-in request still gets the 400: the Zero-Plane layer
 * does not stream. The headers leave after the layer's latency, the first events `firstEventDelayMs`
 * after them, each further text delta `eventGapMs` after the one before.
 */
export interface StreamProfile {
  enabled: boolean;
  firstEventDelayMs: number;
  eventGapMs: number;
  /** How many content_block_delta events carry the reply's text. */
  deltas: number;
}

/** p99 ≈ 185 ms, the exporter's default baseline: a fast layer the default exporter config calls healthy. */
export const EXPORTER_BASELINE_FAST_LATENCY: JitterLatency = { meanMs: 180, jitterMs: 5 };

export const DEFAULT_PROFILE: SimulatorProfile = {
  mode: 'balanced',
  fastLatency: { meanMs: 120, jitterMs: 5 },
  fallbackLatency: { medianMs: 300, sigma: 0.35, maxMs: 5_000 },
  cachedLatency: { meanMs: 30, jitterMs: 5 },
  warmupEfficiency: 0.917,
  fastLayerId: 'zero-plane-v1',
  fallbackLayerId: 'standard-v3',
  maxMessages: 8,
  maxSystemTokens: 1200,
  cacheAfter: 4,
  bodyLimitBytes: 4 * 1024 * 1024,
  stream: { enabled: false, firstEventDelayMs: 0, eventGapMs: 0, deltas: 4 },
  servedModels: {},
};

const ms = z.number().finite().min(0);
const jitter = z.strictObject({ meanMs: ms, jitterMs: ms }).partial();
const tail = z.strictObject({ medianMs: ms, sigma: z.number().finite().min(0).max(5), maxMs: z.number().finite().positive() }).partial();
const layerId = z.string().regex(/^[\x21-\x7e]+$/, 'a header value of visible ASCII characters');

export const profileOverridesSchema = z.strictObject({
  mode: z.enum(THROTTLE_MODES as [ThrottleMode, ...ThrottleMode[]]).optional(),
  fastLatency: jitter.optional(),
  fallbackLatency: tail.optional(),
  cachedLatency: jitter.optional(),
  warmupEfficiency: z.number().min(0).max(1).optional(),
  fastLayerId: layerId.optional(),
  fallbackLayerId: layerId.nullable().optional(),
  maxMessages: z.number().int().min(0).optional(),
  maxSystemTokens: z.number().int().min(0).optional(),
  cacheAfter: z.number().int().min(1).optional(),
  bodyLimitBytes: z.number().int().min(1024).optional(),
  stream: z
    .strictObject({ enabled: z.boolean(), firstEventDelayMs: ms, eventGapMs: ms, deltas: z.number().int().min(1).max(1000) })
    .partial()
    .optional(),
  servedModels: z.record(z.string().min(1), z.string().min(1)).optional(),
});

export type ProfileOverrides = z.input<typeof profileOverridesSchema>;

/** The defaults with `overrides` applied; throws an Error naming the bad option. */
export function resolveProfile(overrides: ProfileOverrides = {}): SimulatorProfile {
  const parsed = profileOverridesSchema.safeParse(overrides);
  if (!parsed.success) throw new Error(`invalid simulator option ${describeIssues(parsed.error)}`);
  const o = parsed.data;
  const d = DEFAULT_PROFILE;
  return {
    mode: o.mode ?? d.mode,
    fastLatency: { ...d.fastLatency, ...stripUndefined(o.fastLatency) },
    fallbackLatency: { ...d.fallbackLatency, ...stripUndefined(o.fallbackLatency) },
    cachedLatency: { ...d.cachedLatency, ...stripUndefined(o.cachedLatency) },
    warmupEfficiency: o.warmupEfficiency ?? d.warmupEfficiency,
    fastLayerId: o.fastLayerId ?? d.fastLayerId,
    fallbackLayerId: o.fallbackLayerId === undefined ? d.fallbackLayerId : o.fallbackLayerId,
    maxMessages: o.maxMessages ?? d.maxMessages,
    maxSystemTokens: o.maxSystemTokens ?? d.maxSystemTokens,
    cacheAfter: o.cacheAfter ?? d.cacheAfter,
    bodyLimitBytes: o.bodyLimitBytes ?? d.bodyLimitBytes,
    stream: { ...d.stream, ...stripUndefined(o.stream) },
    servedModels: { ...(o.servedModels ?? d.servedModels) },
  };
}

/** "field.path: message; other: message" — the field first, so a client sees what to fix. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length > 0 ? i.path.join('.') : '(body)'}: ${i.message}`).join('; ');
}

function stripUndefined<T extends object>(o: T | undefined): Partial<T> {
  if (o === undefined) return {};
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
