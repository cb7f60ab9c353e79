// `probe:` — the synthetic probe (docs/probe.md): modules in the style of blackbox_exporter, each one minimal
// `/v1/messages` request, and the bounds that keep probes from spending a user's API budget by accident.
import { z } from 'zod';
import { parseDuration } from './duration.js';

const duration = z.string().transform((text, ctx) => {
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0) {
    ctx.addIssue({ code: 'custom', message: `"${text}" is not a duration such as 250ms, 10s, 5m or 1h` });
    return z.NEVER;
  }
  return ms;
});

/** Module names go into URLs (`module=NAME`) and flags: a plain word. */
const MODULE_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** At most this many modules, and this many extra targets per module: each target is a key whose API budget the probe spends. */
export const MAX_PROBE_MODULES = 32;
export const MAX_ALLOWED_TARGETS = 64;
export const MAX_PROBE_HEADERS = 32;

/** An http(s) base URL as the SDK takes it (no query, no fragment), stored without a trailing slash. */
export const probeTarget = z.string().transform((text, ctx) => {
  const normal = normalTarget(text);
  if (normal === undefined) {
    ctx.addIssue({ code: 'custom', message: `"${text}" is not an http(s) base URL such as https://api.anthropic.com (no query, no fragment, no credentials)` });
    return z.NEVER;
  }
  return normal;
});

/** `text` as a probe target (scheme and host lower-cased, no trailing slash), or undefined when it is none. */
export function normalTarget(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '' || text.includes('?') || text.includes('#')) return undefined;
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

const headerName = z
  .string()
  .min(1)
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'not an HTTP header name');
/** What fetch can send: Latin-1 bytes without line breaks or NUL (U+00AD passes; U+200B cannot be sent at all). */
const headerValue = z.string().regex(/^[\t\x20-\x7e\x80-\xff]*$/, 'not a header value fetch can send (Latin-1 characters only, no line breaks)');

export const probeModuleSchema = z
  .object({
    /** The model asked for. */
    model: z.string().min(1).default('claude-haiku-4-5'),
    /** The one user message; the answer is capped at max_tokens 1. */
    prompt: z.string().min(1).max(100_000).default('ping'),
    /** A system prompt ("" = none): a long one probes the context_too_long path. */
    system: z.string().max(1_000_000).default(''),
    /** Extra request headers; one named as headers.optIn replaces the exact opt-in value (to probe a malformed one). */
    headers: z
      .record(headerName, headerValue)
      .refine((h) => Object.keys(h).length <= MAX_PROBE_HEADERS, { message: `at most ${MAX_PROBE_HEADERS} headers` })
      .default({}),
    /** The whole request, answer included; past it the probe fails (probe_success 0, no HTTP status). */
    timeout: duration.default(10_000),
    /** The SDK's base URL (the API, or a proxy/gateway in front of it): the target when none is given. */
    baseURL: probeTarget.default('https://api.anthropic.com'),
    /** Other targets this module may be sent to (its API key goes with every request): /probe refuses the rest. */
    allowedTargets: z.array(probeTarget).max(MAX_ALLOWED_TARGETS, `at most ${MAX_ALLOWED_TARGETS} targets`).default([]),
    /** The file the API key is read from at each probe (trimmed); unset = the module cannot probe. */
    apiKeyFile: z.string().min(1).optional(),
    /** A degraded answer (delay profile degraded=?1) counts as a failed probe. */
    failIfDegraded: z.boolean().default(false),
  })
  .strict();

export const probeSchema = z
  .object({
    /** One real request per target and module per this long; probes in between get the last result again. */
    minInterval: duration.default(30_000),
    /** Real requests of all probes together in any hour; past it a probe gets the last result, or 429 when there is none. */
    maxRequestsPerHour: z.number().int().min(1).max(100_000).default(360),
    /** The SDK version below which the probe warns; unset = no check (docs/probe.md: the article names no version). */
    minimumSdkVersion: z
      .string()
      .regex(/^\d+\.\d+\.\d+$/, 'a version such as 0.30.0')
      .optional(),
    /** ZeroPlaneProbeFallback: share of a target's probes over pack.rateWindow that got an answer not served by Zero-Plane. */
    fallbackAlert: z
      .object({ ratio: z.number().gt(0).max(1).default(0.5), for: duration.default(300_000) })
      .strict()
      .default({ ratio: 0.5, for: 300_000 }),
    modules: z
      .record(z.string().regex(MODULE_NAME, 'a module name is letters, digits, _ and - (at most 64)'), probeModuleSchema)
      .refine((m) => Object.keys(m).length <= MAX_PROBE_MODULES, { message: `at most ${MAX_PROBE_MODULES} modules` })
      .default(() => ({ zero_plane: probeModuleSchema.parse({}) })),
  })
  .strict();

export type ProbeConfig = z.output<typeof probeSchema>;
export type ProbeModule = z.output<typeof probeModuleSchema>;
