// The one source of truth for every threshold, field path and limit. The exporter, `report` and the
// generated alerting pack all read a `Config` produced by this schema, so they cannot disagree.
import { createRequire } from 'node:module';
import { z } from 'zod';
import { parseDuration } from './duration.js';
import { MIN_OPEN_FILES } from '../source/open-files.js';

const duration = z.string().transform((text, ctx) => {
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0) {
    ctx.addIssue({ code: 'custom', message: `"${text}" is not a duration such as 250ms, 10s, 5m or 1h` });
    return z.NEVER;
  }
  return ms;
});

const regex = z.string().transform((text, ctx) => {
  try {
    return new RegExp(text);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `not a valid regular expression: ${(err as Error).message}` });
    return z.NEVER;
  }
});

const ratio = z.number().min(0).max(1);
const headerName = z.string().min(1).regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'not an HTTP header name');

/** Where a record carries its headers: one object field, or flat fields named prefix + header (dashes → underscores). */
const headerSource = z
  .object({
    path: z.string().min(1).optional(),
    prefix: z.string().min(1).optional(),
  })
  .strict()
  .refine((h) => (h.path === undefined) !== (h.prefix === undefined), {
    message: 'give exactly one of `path` (an object of headers) or `prefix` (flat fields)',
  });

const fields = z
  .object({
    time: z.string().min(1),
    latency: z.string().min(1),
    status: z.string().min(1),
    model: z.string().min(1),
    route: z.string().min(1),
    cohort: z.string().min(1),
  })
  .strict();

export const PRESET_NAMES = ['default', 'nginx-json', 'envoy-json'] as const;

export const inputSchema = z
  .object({
    preset: z.enum(PRESET_NAMES).default('default'),
    /** Overrides of the preset's field paths (dotted paths into the JSON object). */
    fields: fields.partial().default({}),
    latencyUnit: z.enum(['s', 'ms', 'us']).optional(),
    /** nginx writes "0.050, 0.183" after retries: `last` is the attempt whose headers were logged. */
    latencyList: z.enum(['last', 'sum']).default('last'),
    responseHeaders: headerSource.optional(),
    requestHeaders: headerSource.optional(),
    /** Values gateways write for "no such header" (nginx `-` or empty, Envoy `-`). */
    absentValues: z.array(z.string()).default(['', '-']),
    maxLineBytes: z.number().int().min(256).default(1024 * 1024),
  })
  .strict();

export const headersSchema = z
  .object({
    layerId: z.object({ name: headerName.default('x-anthropic-layer-id'), match: regex.default(/^zero-plane-v[0-9]+$/) }).strict().default({ name: 'x-anthropic-layer-id', match: /^zero-plane-v[0-9]+$/ }),
    delayProfile: z
      .object({
        name: headerName.default('x-anthropic-delay-profile'),
        degradedMember: z.string().default('degraded'),
        warmupMember: z.string().default('warmup'),
        modeMember: z.string().default('mode'),
      })
      .strict()
      .default({ name: 'x-anthropic-delay-profile', degradedMember: 'degraded', warmupMember: 'warmup', modeMember: 'mode' }),
    cached: z.object({ name: headerName.default('x-anthropic-cached'), value: z.string().default('true') }).strict().default({ name: 'x-anthropic-cached', value: 'true' }),
    downgradeReason: z.object({ name: headerName.default('x-anthropic-downgrade-reason') }).strict().default({ name: 'x-anthropic-downgrade-reason' }),
    optIn: z.object({ name: headerName.default('x-anthropic-experimental'), value: z.string().default('zero-plane-2024') }).strict().default({ name: 'x-anthropic-experimental', value: 'zero-plane-2024' }),
  })
  .strict();

export const signalsSchema = z
  .object({
    baselineSeconds: z.number().positive().default(0.185),
    tolerance: z.number().positive().max(1).default(0.05),
    fastTargetSeconds: z.number().positive().default(0.12),
    hitRateTarget: ratio.default(0.994),
    warmupEfficiencyTarget: ratio.default(0.88),
    warmupEfficiencyBaseline: ratio.default(0.917),
    /** Parse errors / lines above which the exporter's own input is considered broken. */
    parseErrorRatioMax: ratio.default(0.01),
    /** Cohort label values that are not canaries (the empty value is never a canary). */
    stableCohorts: z.array(z.string()).default(['stable']),
  })
  .strict();

export const windowSchema = z
  .object({
    duration: duration.default(300_000),
    /** Granularity of the ring of sub-window sketches; the window slides by this much. */
    slot: duration.default(10_000),
    /** DDSketch relative accuracy; half the 0.5 % the spec allows, leaving room for rank rounding. */
    quantileRelativeAccuracy: z.number().gt(0).max(0.005).default(0.0025),
  })
  .strict()
  .refine((w) => w.duration % w.slot === 0 && w.duration / w.slot <= 3600, {
    message: '`duration` must be a whole multiple of `slot`, at most 3600 slots',
  });

export const metricsSchema = z
  .object({
    /** Extra histogram bounds in seconds; the threshold bounds are always added. */
    histogramBuckets: z.array(z.number().positive()).optional(),
    labelValueLimit: z.number().int().min(1).default(50),
    downgradeReasonLimit: z.number().int().min(1).default(20),
  })
  .strict();

export const sourcesSchema = z
  .object({
    files: z.array(z.string().min(1)).default([]),
    stdin: z.boolean().default(false),
    pollInterval: duration.default(250),
    startAt: z.enum(['end', 'start']).default('end'),
    /**
     * Followed files held open at once; past it the least recently active are closed and reopened by
     * identity when they change. Lowered at start to leave 128 descriptors below the process's limit.
     */
    maxOpenFiles: z.number().int().min(MIN_OPEN_FILES).max(1_000_000).default(1024),
  })
  .strict();

export const webSchema = z
  .object({
    listenAddress: z.string().default(':9185'),
    telemetryPath: z.string().startsWith('/').default('/metrics'),
  })
  .strict();

export const gateSchema = z
  .object({
    /** A file holding the bearer token Alertmanager must send to the webhook; none = no auth. */
    bearerTokenFile: z.string().min(1).optional(),
    /** Alerts carrying this label value pause non-core calls (the P0). */
    pauseLabel: z.string().min(1).default('priority'),
    pauseValue: z.string().min(1).default('P0'),
  })
  .strict();

/** POST /api/v1/ingest: NDJSON pushed over HTTP, fed to the same pipeline as files and stdin (source "http"). */
export const ingestSchema = z
  .object({
    /** Off by default: anyone who can reach the port could otherwise write records the alerts evaluate. */
    enabled: z.boolean().default(false),
    /** A file holding the bearer token pushers must send; none = no token (basic auth may still apply). */
    bearerTokenFile: z.string().min(1).optional(),
    /** Largest body accepted, counted both as received and after gzip decompression. */
    maxBodyBytes: z.number().int().min(1024).max(1024 * 1024 * 1024).default(10 * 1024 * 1024),
    /** Body bytes held at once across concurrent requests; past it a request gets 429 and is retried. */
    maxInFlightBytes: z.number().int().min(1024).max(4 * 1024 * 1024 * 1024).default(64 * 1024 * 1024),
  })
  .strict()
  .refine((i) => i.maxInFlightBytes >= i.maxBodyBytes, {
    message: '`maxInFlightBytes` must be at least `maxBodyBytes`, or a body of the largest size could never be accepted',
    path: ['maxInFlightBytes'],
  });

/**
 * node-cron's own validator, loaded only when a config sets a schedule: `report` reads the config too
 * and should not pay for node-cron (about 10 ms) to check a key it never uses.
 */
function cronProblems(expression: string): string[] {
  const cron = createRequire(import.meta.url)('node-cron') as typeof import('node-cron');
  const detail = cron.validateDetailed(expression);
  if (detail.valid) return [];
  return detail.errors.length > 0 ? detail.errors.map((e) => `${e.field}: ${e.message}`) : ['invalid'];
}

const cronExpression = z.string().superRefine((text, ctx) => {
  const problems = cronProblems(text);
  if (problems.length > 0) {
    ctx.addIssue({
      code: 'custom',
      message: `"${text}" is not a cron expression (node-cron: 5 fields, or 6 with seconds first, e.g. "*/5 * * * * *"): ${problems.join('; ')}`,
    });
  }
});

/** Checkpoints: counters and file offsets saved so a restart resumes with both (off unless `file` is set). */
export const checkpointSchema = z
  .object({
    /** Where the checkpoint is written (atomically: temporary file, fsync, rename); unset = no checkpoints. */
    file: z.string().min(1).optional(),
    /** When it is written, besides at SIGTERM/SIGINT: a node-cron expression (seconds first). */
    schedule: cronExpression.default('*/5 * * * * *'),
    /**
     * After downtime, a file further than this behind its end resumes this far from its end (at a line
     * start); the bytes passed over count in skipped_bytes_total{reason="catch_up_cap"}. 0 = resume at the end.
     */
    maxCatchUpBytes: z.number().int().min(0).default(256 * 1024 * 1024),
  })
  .strict();

const forDuration = z.string().transform((text, ctx) => {
  const ms = text === '0s' || text === '0' ? 0 : parseDuration(text);
  if (ms === undefined) {
    ctx.addIssue({ code: 'custom', message: `"${text}" is not a duration such as 0s, 2m or 1h` });
    return z.NEVER;
  }
  return ms;
});

/** `for:` of each alert ("0s" = fire on the first evaluation). */
const forSchema = z
  .object({
    p0: forDuration.default(120_000),
    driftOutOfBand: forDuration.default(300_000),
    canaryRollback: forDuration.default(600_000),
    hitRateLow: forDuration.default(600_000),
    // Longer than p0's, so the P0 is firing (and inhibits this warning) before the warning would fire.
    degraded: forDuration.default(180_000),
    warmupEfficiencyLow: forDuration.default(1_800_000),
    optInMalformed: forDuration.default(0),
    exporterDown: forDuration.default(300_000),
    sourceStalled: forDuration.default(300_000),
    parseErrorsHigh: forDuration.default(600_000),
  })
  .strict();

/** How the alerting pack is generated: windows, `for` durations, selectors, links. */
export const packSchema = z
  .object({
    rateWindow: duration.default(300_000),
    evaluationInterval: duration.default(30_000),
    /** Selects the exporter's scrape job in `up`, for ZeroPlaneExporterDown. */
    exporterSelector: z.string().default('job="zero-plane-exporter"'),
    runbookUrl: z.string().default('https://github.com/zero-plane/zero-plane-exporter/blob/main/docs/runbook.md'),
    /** ZeroPlaneLogSourceStalled: no new record for this long. */
    stalledAfter: duration.default(600_000),
    for: forSchema.default(() => forSchema.parse({})),
  })
  .strict();


export const configSchema = z
  .object({
    input: inputSchema.default(() => inputSchema.parse({})),
    headers: headersSchema.default(() => headersSchema.parse({})),
    signals: signalsSchema.default(() => signalsSchema.parse({})),
    window: windowSchema.default(() => windowSchema.parse({})),
    metrics: metricsSchema.default(() => metricsSchema.parse({})),
    sources: sourcesSchema.default(() => sourcesSchema.parse({})),
    web: webSchema.default(() => webSchema.parse({})),
    gate: gateSchema.default(() => gateSchema.parse({})),
    ingest: ingestSchema.default(() => ingestSchema.parse({})),
    pack: packSchema.default(() => packSchema.parse({})),
    checkpoint: checkpointSchema.default(() => checkpointSchema.parse({})),
  })
  .strict();

export type Config = z.output<typeof configSchema>;

/** The built-in defaults: what runs when no `--config.file` is given. */
export function defaultConfig(): Config {
  return configSchema.parse({});
}
