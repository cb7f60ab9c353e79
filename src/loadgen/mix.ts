// What the load generator sends: a realistic mix of Messages API requests, drawn from a seeded random source
// so a run can be replayed. Mostly well-formed opt-ins, and the defects real clients produce.
import { z } from 'zod';
import { OPT_IN_HEADER, OPT_IN_VALUE } from '../simulate/protocol.js';
import { EvenDraws, intBetween, pick, randomDraws, weightedPick, type Draws, type Rng } from '../simulate/random.js';
import { describeIssues } from '../simulate/profile.js';

export interface Mix {
  /** Share of requests whose opt-in value is subtly wrong (an invisible character, a stray non-breaking space, wrong case; evenly). */
  malformedOptIn: number;
  /** Share of requests that do not opt in at all. */
  missingOptIn: number;
  /** Share of conversations longer than the fast layer takes (9–15 messages). */
  longConversation: number;
  /** Share with a system prompt over ~1200 tokens (5 000–8 000 characters). */
  longSystemPrompt: number;
  /** Share of requests sent as runs of identical bodies (each run `repeatRunLength` long). */
  repeatedBodies: number;
  repeatRunLength: number;
  /** Share with "stream": true. */
  stream: number;
  /** Share sent with `x-cohort: <canaryCohort>`; the rest carry `stableCohort`. */
  canary: number;
  canaryCohort: string;
  stableCohort: string;
  /** Model → relative weight. */
  models: Record<string, number>;
  /**
   * How the shares above fall: `random` (each request drawn independently) or `even` (spread exactly:
   * a 0.2 % share is every 500th request), so a short run already has its shares and no clusters.
   */
  draws: 'random' | 'even';
}

export const DEFAULT_MIX: Readonly<Mix> = Object.freeze({
  malformedOptIn: 0.03,
  missingOptIn: 0.01,
  longConversation: 0.03,
  longSystemPrompt: 0.02,
  repeatedBodies: 0.05,
  repeatRunLength: 5,
  stream: 0.01,
  canary: 0.1,
  canaryCohort: 'canary',
  stableCohort: 'stable',
  models: { 'claude-sonnet': 0.7, 'claude-haiku': 0.3 },
  draws: 'random',
});

const share = z.number().min(0).max(1);
const mixSchema = z
  .strictObject({
    malformedOptIn: share,
    missingOptIn: share,
    longConversation: share,
    longSystemPrompt: share,
    repeatedBodies: share,
    repeatRunLength: z.number().int().min(1).max(1000),
    stream: share,
    canary: share,
    canaryCohort: z.string().min(1),
    stableCohort: z.string().min(1),
    models: z.record(z.string().min(1), z.number().min(0)).refine((m) => Object.values(m).some((w) => w > 0), 'at least one model needs a positive weight'),
    draws: z.enum(['random', 'even']),
  })
  .refine((m) => m.malformedOptIn + m.missingOptIn <= 1, { message: 'malformedOptIn + missingOptIn must not exceed 1', path: ['malformedOptIn'] })
  .refine((m) => m.longConversation + m.longSystemPrompt <= 1, { message: 'longConversation + longSystemPrompt must not exceed 1', path: ['longConversation'] });

/** DEFAULT_MIX with `overrides`; throws an Error naming the bad field. */
export function resolveMix(overrides: Partial<Mix> = {}): Mix {
  const defined = Object.fromEntries(Object.entries(overrides).filter(([, v]) => v !== undefined));
  const parsed = mixSchema.safeParse({ ...DEFAULT_MIX, ...defined });
  if (!parsed.success) throw new Error(`invalid load mix: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

export type OptInVariant = 'valid' | 'missing' | 'invisible_char' | 'whitespace' | 'case';

/**
 * The defective values. "Stray whitespace" is a non-breaking space: HTTP parsers strip ordinary spaces and
 * tabs around a header value (RFC 9110 OWS) before the upstream or the gateway log sees them, so only a
 * non-ASCII space survives the wire, exactly like a value pasted from a document.
 */
const DEFECTIVE: Record<'invisible_char' | 'whitespace' | 'case', readonly string[]> = {
  invisible_char: [`\u200b${OPT_IN_VALUE}`, `${OPT_IN_VALUE}\u200b`, `zero-plane\u200d-2024`, `\ufeff${OPT_IN_VALUE}`, `${OPT_IN_VALUE}\u2060`],
  whitespace: [`${OPT_IN_VALUE}\u00a0`, `\u00a0${OPT_IN_VALUE}`],
  case: ['Zero-Plane-2024', 'ZERO-PLANE-2024', 'zero-Plane-2024'],
};

export interface PlannedRequest {
  body: string;
  /** Request headers as text; values may contain any Unicode (see wireHeaderValue). */
  headers: Record<string, string>;
  /** The opt-in value sent, or undefined when none was. */
  optIn: string | undefined;
  optInVariant: OptInVariant;
  model: string;
  cohort: string;
  /** Part of a run of identical bodies (after its first). */
  repeated: boolean;
}

const WORDS = 'latency layer cache token window prompt model gateway route cohort canary deploy region replica budget trace span metric alert shard'.split(' ');
const SHORT_SYSTEMS = [undefined, 'You are a helpful assistant.', 'Answer briefly and cite the runbook section.'];

/** Draws requests one after the other; identical-body runs are consecutive, as the cache rule needs. */
export class RequestPlanner {
  private seq = 0;
  private run: { request: PlannedRequest; left: number } | undefined;
  private readonly draws: Draws;

  constructor(
    readonly mix: Mix,
    private readonly rng: Rng,
  ) {
    this.draws = mix.draws === 'even' ? new EvenDraws() : randomDraws(rng);
  }

  /**
   * The opt-in of every request is drawn for that request, repeats included (the cache rule looks at the
   * body only), and runs repeat only ordinary bodies (not long, not streamed): every share is a share of
   * requests, not multiplied by a run's length.
   */
  next(): PlannedRequest {
    if (this.run !== undefined && this.run.left > 0) {
      this.run.left--;
      return { ...this.run.request, ...this.optInOf(this.run.request.headers), repeated: true };
    }
    this.run = undefined;
    const { request, ordinary } = this.fresh();
    const runLength = this.mix.repeatRunLength;
    if (ordinary && runLength > 1 && this.draws.chance('repeated', this.mix.repeatedBodies / runLength)) this.run = { request, left: runLength - 1 };
    return request;
  }

  /** A drawn opt-in, with the request headers that carry it. */
  private optInOf(base: Record<string, string>): Pick<PlannedRequest, 'optIn' | 'optInVariant' | 'headers'> {
    const { mix, rng, draws } = this;
    // Each share is drawn given the ones before it did not happen, so the shares come out as configured.
    let optInVariant: OptInVariant;
    if (draws.chance('malformedOptIn', mix.malformedOptIn)) optInVariant = pick(rng, ['invisible_char', 'whitespace', 'case'] as const);
    else if (draws.chance('missingOptIn', conditional(mix.missingOptIn, mix.malformedOptIn))) optInVariant = 'missing';
    else optInVariant = 'valid';
    const optIn = optInVariant === 'valid' ? OPT_IN_VALUE : optInVariant === 'missing' ? undefined : pick(rng, DEFECTIVE[optInVariant]);
    const { [OPT_IN_HEADER]: _previous, ...headers } = base;
    if (optIn !== undefined) headers[OPT_IN_HEADER] = optIn;
    return { optIn, optInVariant, headers };
  }

  private fresh(): { request: PlannedRequest; ordinary: boolean } {
    const { mix, rng } = this;
    const n = ++this.seq;
    const model = weightedPick(rng, mix.models);
    const { draws } = this;
    const cohort = draws.chance('canary', mix.canary) ? mix.canaryCohort : mix.stableCohort;
    const optIn = this.optInOf({ 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-cohort': cohort });

    const longConversation = draws.chance('longConversation', mix.longConversation);
    const longSystem = !longConversation && draws.chance('longSystemPrompt', conditional(mix.longSystemPrompt, mix.longConversation));
    const turns = longConversation ? pick(rng, [9, 11, 13, 15]) : pick(rng, [1, 1, 1, 3, 3, 5, 7]);
    const messages = Array.from({ length: turns }, (_, i) => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: i === turns - 1 ? `Request ${n}: ${this.words(intBetween(rng, 8, 40))}` : this.words(intBetween(rng, 5, 30)),
    }));
    const system = longSystem ? this.longText(intBetween(rng, 5_000, 8_000)) : pick(rng, SHORT_SYSTEMS);
    const body: Record<string, unknown> = { model, max_tokens: pick(rng, [256, 512, 1024]), messages };
    if (system !== undefined) body.system = system;
    const stream = draws.chance('stream', mix.stream);
    if (stream) body.stream = true;
    return {
      request: { body: JSON.stringify(body), ...optIn, model, cohort, repeated: false },
      ordinary: !longConversation && !longSystem && !stream,
    };
  }

  private words(count: number): string {
    return Array.from({ length: count }, () => pick(this.rng, WORDS)).join(' ');
  }

  private longText(chars: number): string {
    let text = 'You are the on-call assistant. Follow these operating notes closely.';
    while (text.length < chars) text += ` ${this.words(12)}.`;
    return text;
  }
}

/** P(B | not A) for disjoint shares a and b: what keeps b the share of all requests when A is drawn first. */
function conditional(b: number, a: number): number {
  return a >= 1 ? 0 : b / (1 - a);
}

/**
 * A header value as Node's HTTP client must be given it: header bytes are Latin-1 on Node's side, so the
 * UTF-8 bytes of the text are passed one per character. A zero-width space arrives as the bytes a real
 * client would send (E2 80 8B), not as a rejected character.
 */
export function wireHeaderValue(text: string): string {
  return /^[\x20-\x7e]*$/.test(text) ? text : Buffer.from(text, 'utf8').toString('latin1');
}
