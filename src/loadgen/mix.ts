// What the load generator sends: a realistic mix of Messages API requests, drawn from a seeded random source
// so a run can be replayed. Mostly well-formed opt-ins, and the defects real clients produce.
import { z } from 'zod';
import { OPT_IN_HEADER, OPT_IN_VALUE } from '../simulate/protocol.js';
import { chance, intBetween, pick, weightedPick, type Rng } from '../simulate/random.js';
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

  constructor(
    readonly mix: Mix,
    private readonly rng: Rng,
  ) {}

  next(): PlannedRequest {
    if (this.run !== undefined && this.run.left > 0) {
      this.run.left--;
      return { ...this.run.request, repeated: true };
    }
    this.run = undefined;
    const request = this.fresh();
    const runLength = this.mix.repeatRunLength;
    if (runLength > 1 && chance(this.rng, this.mix.repeatedBodies / runLength)) this.run = { request, left: runLength - 1 };
    return request;
  }

  private fresh(): PlannedRequest {
    const { mix, rng } = this;
    const n = ++this.seq;
    const model = weightedPick(rng, mix.models);
    const cohort = chance(rng, mix.canary) ? mix.canaryCohort : mix.stableCohort;

    const r = rng();
    let optInVariant: OptInVariant;
    if (r < mix.malformedOptIn) optInVariant = pick(rng, ['invisible_char', 'whitespace', 'case'] as const);
    else if (r < mix.malformedOptIn + mix.missingOptIn) optInVariant = 'missing';
    else optInVariant = 'valid';
    const optIn = optInVariant === 'valid' ? OPT_IN_VALUE : optInVariant === 'missing' ? undefined : pick(rng, DEFECTIVE[optInVariant]);

    const shape = rng();
    const longConversation = shape < mix.longConversation;
    const longSystem = !longConversation && shape < mix.longConversation + mix.longSystemPrompt;
    const turns = longConversation ? pick(rng, [9, 11, 13, 15]) : pick(rng, [1, 1, 1, 3, 3, 5, 7]);
    const messages = Array.from({ length: turns }, (_, i) => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: i === turns - 1 ? `Request ${n}: ${this.words(intBetween(rng, 8, 40))}` : this.words(intBetween(rng, 5, 30)),
    }));
    const system = longSystem ? this.longText(intBetween(rng, 5_000, 8_000)) : pick(rng, SHORT_SYSTEMS);
    const body: Record<string, unknown> = { model, max_tokens: pick(rng, [256, 512, 1024]), messages };
    if (system !== undefined) body.system = system;
    if (chance(rng, mix.stream)) body.stream = true;

    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      'x-cohort': cohort,
    };
    if (optIn !== undefined) headers[OPT_IN_HEADER] = optIn;
    return { body: JSON.stringify(body), headers, optIn, optInVariant, model, cohort, repeated: false };
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

/**
 * A header value as Node's HTTP client must be given it: header bytes are Latin-1 on Node's side, so the
 * UTF-8 bytes of the text are passed one per character. A zero-width space arrives as the bytes a real
 * client would send (E2 80 8B), not as a rejected character.
 */
export function wireHeaderValue(text: string): string {
  return /^[\x20-\x7e]*$/.test(text) ? text : Buffer.from(text, 'utf8').toString('latin1');
}
