// The one source of truth for every threshold, field path and limit. The exporter, `report` and the
// generated alerting pack all read a `Config` produced by this schema, so they cannot disagree.
import { createRequire } from 'node:module';
import { z } from 'zod';
import { matcherListProblem } from './promql-matchers.js';
import { onCalendar } from '../record/calendar.js';
import { headerSourceProblems, PRESET_NAMES, type RecordConfig } from '../record/presets.js';
import { ENVELOPE_MODES } from '../source/envelope.js';
import { MIN_OPEN_FILES } from '../source/open-files.js';
import { parseListenAddress } from './listen-address.js';
import { formatDuration, parseDuration } from './duration.js';
import { cappedArray, withinCap } from './list-caps.js';
import { probeSchema } from './probe-schema.js';

const duration = z.string().transform((text, ctx) => {
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0) {
    ctx.addIssue({ code: 'custom', message: `"${text}" is not a duration such as 250ms, 10s, 5m or 1h` });
    return z.NEVER;
  }
  return ms;
});

/** An RFC 3339 time, as epoch milliseconds. */
const instant = z.string().transform((text, ctx) => {
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(text) && onCalendar(text) ? Date.parse(text) : Number.NaN;
  if (!Number.isFinite(ms)) {
    ctx.addIssue({ code: 'custom', message: `"${text}" is not an RFC 3339 time such as 2000-01-01T00:00:00Z` });
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
const labelName = z.string().regex(/^[a-zA-Z_][a-zA-Z0-9_]*$/, 'not a Prometheus label name');
const headerName = z
  .string()
  .min(1)
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'not an HTTP header name');

/**
 * Where a record carries its headers: one object field (`path`), or flat fields named prefix + header
 * (`prefix`), the header name written `underscore` (x_anthropic_layer_id: nginx, Envoy, HAProxy) or
 * `canonical` (X-Anthropic-Layer-Id, Go's form: Traefik). `{}` = the preset's.
 */
const headerSource = z
  .object({
    path: z.string().min(1).optional(),
    /** "" = the header fields sit at the top level, named for the header alone (x_anthropic_layer_id). */
    prefix: z.string().optional(),
    nameStyle: z.enum(['underscore', 'canonical']).optional(),
    /** Flat fields of a log that leaves out a header not sent (Traefik): every line carries these headers. */
    omitsMissing: z.boolean().optional(),
  })
  .strict()
  // The rules live with the record's header sources (record/presets.ts), which headers-hint.ts checks its fixes by.
  .superRefine((h, ctx) => {
    for (const message of headerSourceProblems(h)) ctx.addIssue({ code: 'custom', message });
  });

const path = z.string().min(1);
/** A dotted path of non-empty steps (`headers.layer`), for input.headers. */
const dottedPath = z.string().regex(/^[^.]+(\.[^.]+)*$/, 'not a dotted field path such as `layer` or `headers.layer` (an empty step, or empty)');
/**
 * input.headers.response / .request: header name (any case) → the dotted path that header sits at, read
 * instead of the side's header source for that header. Which names a side may map is checked against
 * `headers` by the config (a name nothing reads would be a mapping that silently does nothing).
 */
const headerPaths = z.record(z.string(), dottedPath).superRefine((paths, ctx) => {
  const seen = new Map<string, string>();
  for (const name of Object.keys(paths)) {
    // Checked here rather than by a key schema, whose issue would not say what is wrong with the key.
    if (!headerName.safeParse(name).success) ctx.addIssue({ code: 'custom', path: [name], message: `"${name}" is not an HTTP header name` });
    const prior = seen.get(name.toLowerCase());
    if (prior !== undefined) ctx.addIssue({ code: 'custom', path: [name], message: `maps the same header as \`${prior}\` (names match in any case): keep one` });
    seen.set(name.toLowerCase(), name);
  }
});
const fields = z
  .object({
    time: path,
    /** Paths tried in order: the first one that holds a latency is used (nginx: upstream time, then request time). */
    latency: z.union([path, cappedArray(path, 'input.fields.latency').min(1)]).transform((v) => (typeof v === 'string' ? [v] : v)),
    status: path,
    model: path,
    route: path,
    cohort: path,
    /** Where a gateway that logs token usage keeps each count (zero_plane_tokens_total); the preset's otherwise. */
    tokensInput: path,
    tokensOutput: path,
    tokensCacheRead: path,
    tokensCacheCreation: path,
    /** Where the record carries its prompt's hash (repeated questions: `repeats`); the preset's otherwise (default: prompt_hash). */
    promptHash: path,
  })
  .strict();

export const inputSchema = z
  .object({
    /** A preset from record/presets.ts, or `auto`: one per source, detected from its first lines. */
    preset: z.enum(['auto', ...PRESET_NAMES]).default('auto'),
    /** Overrides of the preset's field paths (dotted paths into the JSON object). */
    fields: fields.partial().default({}),
    /** The unit of latency values; `preset` = the preset's own. */
    latencyUnit: z.enum(['preset', 's', 'ms', 'us', 'ns']).default('preset'),
    /** nginx writes "0.050, 0.183" after retries: `last` is the attempt whose headers were logged. */
    latencyList: z.enum(['last', 'sum']).default('last'),
    responseHeaders: headerSource.default({}),
    requestHeaders: headerSource.default({}),
    /** Per-header paths overriding the header sources above, one header at a time. */
    headers: z
      .object({ response: headerPaths.default({}), request: headerPaths.default({}) })
      .strict()
      .default({ response: {}, request: {} }),
    /** What gateways write for "no such value" (nginx "", Envoy and HAProxy "-"); JSON null is always absent. */
    absentValues: cappedArray(z.string(), 'input.absentValues').default(['', '-']),
    maxLineBytes: z
      .number()
      .int()
      .min(256)
      .default(1024 * 1024),
    /**
     * A source whose first `records` records (serve: or those of its first `duration`) carry no wanted
     * response header field where its preset keeps them is said out loud (input-watch.ts).
     */
    headerWatch: z
      .object({ records: z.number().int().min(1).default(1000), duration: duration.default(300_000) })
      .strict()
      .default({ records: 1000, duration: 300_000 }),
    /** A latency above this is a parse error (`implausible_latency`), never a sample: a unit read wrong, a clock jump. */
    maxLatency: duration.default(3_600_000),
    /** What wraps each line (source/envelope.ts): `auto` decides per file from its first lines. */
    envelope: z.enum(ENVELOPE_MODES).default('auto'),
  })
  .strict();

export const headersSchema = z
  .object({
    layerId: z
      .object({ name: headerName.default('x-anthropic-layer-id'), match: regex.default(/^zero-plane-v[0-9]+$/) })
      .strict()
      .default({ name: 'x-anthropic-layer-id', match: /^zero-plane-v[0-9]+$/ }),
    delayProfile: z
      .object({
        name: headerName.default('x-anthropic-delay-profile'),
        degradedMember: z.string().default('degraded'),
        warmupMember: z.string().default('warmup'),
        modeMember: z.string().default('mode'),
      })
      .strict()
      .default({ name: 'x-anthropic-delay-profile', degradedMember: 'degraded', warmupMember: 'warmup', modeMember: 'mode' }),
    cached: z
      .object({ name: headerName.default('x-anthropic-cached'), value: z.string().default('true') })
      .strict()
      .default({ name: 'x-anthropic-cached', value: 'true' }),
    downgradeReason: z
      .object({ name: headerName.default('x-anthropic-downgrade-reason') })
      .strict()
      .default({ name: 'x-anthropic-downgrade-reason' }),
    optIn: z
      .object({ name: headerName.default('x-anthropic-experimental'), value: z.string().default('zero-plane-2024') })
      .strict()
      .default({ name: 'x-anthropic-experimental', value: 'zero-plane-2024' }),
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
    stableCohorts: cappedArray(z.string(), 'signals.stableCohorts').default(['stable']),
  })
  .strict();

export const windowSchema = z
  .object({
    duration: duration.default(300_000),
    /** Granularity of the ring of sub-window sketches; the window slides by this much. */
    slot: duration.default(10_000),
    /** DDSketch relative accuracy; half the 0.5 % docs/contract.md §4 allows, leaving room for rank rounding. */
    quantileRelativeAccuracy: z.number().gt(0).max(0.005).default(0.0025),
  })
  .strict()
  .refine((w) => w.duration % w.slot === 0 && w.duration / w.slot <= 3600, {
    message: '`duration` must be a whole multiple of `slot`, at most 3600 slots',
  });

export const metricsSchema = z
  .object({
    /** Extra histogram bounds in seconds; the threshold bounds are always added. */
    histogramBuckets: cappedArray(z.number().positive(), 'metrics.histogramBuckets').optional(),
    labelValueLimit: z.number().int().min(1).default(50),
    downgradeReasonLimit: z.number().int().min(1).default(20),
    /** Longest label value kept (UTF-8 bytes, the cut mark included); longer ones are cut and marked. */
    labelValueMaxBytes: z.number().int().min(16).max(4096).default(128),
    /** Series one family may hold (a histogram's label set counts once); past it new ones go to __other__. */
    maxSeriesPerFamily: z.number().int().min(100).max(1_000_000).default(1000),
  })
  .strict();

/** Repeated questions: the top-k of prompt hashes (windows/repeated-prompts.ts), shown by `report`, `serve` and /api/v1/repeats. */
export const repeatsSchema = z
  .object({
    /** Hashes kept (Space-Saving counters): memory is bounded by this, whatever the number of distinct prompts. */
    k: z.number().int().min(10).max(100_000).default(1000),
    /** Hashes shown: `report`, the zero_plane_repeated_prompt_requests series, /api/v1/repeats. */
    top: z.number().int().min(1).max(100).default(10),
  })
  .strict()
  .refine((r) => r.top <= r.k, { message: '`top` must not exceed `k`: only the k kept hashes can be shown', path: ['top'] });

export const sourcesSchema = z
  .object({
    files: cappedArray(z.string().min(1), 'sources.files').default([]),
    stdin: z.boolean().default(false),
    pollInterval: duration.default(250),
    startAt: z.enum(['end', 'start']).default('end'),
    /**
     * Followed files held open at once; past it the least recently active are closed and reopened by
     * identity when they change. Lowered at start to leave 128 descriptors below the process's limit.
     */
    maxOpenFiles: z.number().int().min(MIN_OPEN_FILES).max(1_000_000).default(1024),
    /**
     * auto: the followed files' directories are watched (inotify) where events can be trusted, so idle files
     * are not stat-ed and globs not listed every poll; off: poll only (what `auto` falls back to elsewhere).
     */
    watch: z.enum(['auto', 'off']).default('auto'),
    /** With watching: an unchanged file or glob is stat-ed or listed at least this often anyway (the safety poll). */
    rescanInterval: duration.default(10_000),
  })
  .strict();

/** Where `serve` parses the followed files. */
export const parseSchema = z
  .object({
    /**
     * Worker threads that follow and parse sources.files, handing counts (never lines) to the thread that
     * answers /metrics, so a scrape never waits for parsing. Patterns are shared out among them (a pattern's
     * files are read by one worker); 0 parses on the serving thread.
     */
    workers: z.number().int().min(0).max(16).default(1),
  })
  .strict();

/** How basic auth (`basic_auth_users` in --web.config.file) bounds what wrong passwords can cost. */
export const basicAuthSchema = z
  .object({
    /** A hash of a higher cost is refused at start: each check doubles per step (cost 10 ≈ 75 ms of CPU). */
    maxBcryptCost: z.number().int().min(4).max(31).default(14),
    /** Failed logins a client address may have in a row; then 429 without a bcrypt check… */
    failedLoginBurst: z.number().int().min(1).default(10),
    /** …until one more is allowed per this long. */
    failedLoginInterval: duration.default(6_000),
    /** Logins waiting for the bcrypt thread beyond which more get 429. */
    maxPendingChecks: z.number().int().min(1).default(32),
    /** Of those, at most this many from one /24 (IPv4) or /64 (IPv6); the queue is served round robin by network, then address. */
    maxPendingChecksPerPrefix: z.number().int().min(1).default(16),
    /** The last this many of maxPendingChecks are kept for user names that exist. */
    knownUserReservedChecks: z.number().int().min(0).default(4),
    /** Failed logins all addresses together may have in a row; past it only addresses with no recent failure are checked… */
    globalFailedLoginBurst: z.number().int().min(1).default(60),
    /** …until one more is allowed per this long. */
    globalFailedLoginInterval: duration.default(250),
    /** A 429 for a login is answered after this long (at most its Retry-After): a flood that retries at once retries slowly. */
    refusalDelay: duration.default(1_000),
    /** 429s held back at most at once (each is an open socket); past it they are answered at once (0: never held). */
    maxHeldRefusals: z.number().int().min(0).max(65_536).default(1024),
  })
  .refine((b) => b.knownUserReservedChecks < b.maxPendingChecks, {
    message: '`knownUserReservedChecks` must be below `maxPendingChecks`, or no login for an unknown name (which must cost the same) could ever be checked',
    path: ['knownUserReservedChecks'],
  })
  .strict();

const listenAddress = z.string().min(1);

export const webSchema = z
  .object({
    /** One address or a list (each is bound); --web.listen-address, repeatable, replaces it. */
    listenAddress: z.union([listenAddress, cappedArray(listenAddress, 'web.listenAddress').min(1)]).default(':9185'),
    telemetryPath: z.string().startsWith('/').default('/metrics'),
    /** `_created` samples when /metrics answers OpenMetrics; false for a Prometheus before 3.0, which stores each as a series. */
    openMetricsCreated: z.boolean().default(true),
    /** Scrapes of the telemetry path answered at once (--web.max-requests); past it 503. 0 = no limit. */
    maxRequests: z.number().int().min(0).max(10_000).default(40),
    /**
     * A second listener answering only /-/healthy and /-/ready, from a thread of its own (--web.probe-listen-address;
     * point the kubelet's probes at it): a scrape flood on the main port does not delay it. Unset = none.
     */
    probeListenAddress: listenAddress.refine((text) => parseListenAddress(text) !== undefined, 'not HOST:PORT or :PORT').optional(),
    /** On the probe listener, /-/healthy answers 503 once the main event loop has not run for this long. */
    probeStallTimeout: duration
      .default(10_000)
      .refine((ms) => ms >= 1_000 && ms <= 3_600_000, 'must be from 1s to 1h (the main thread beats every 100 ms; a GC pause or a busy moment lasts well under a second)'),
    basicAuth: basicAuthSchema.default(() => basicAuthSchema.parse({})),
  })
  .strict();

/** Every address of `web.listenAddress`, which may be one or a list. */
export function listenAddresses(web: { listenAddress: string | readonly string[] }): string[] {
  return typeof web.listenAddress === 'string' ? [web.listenAddress] : [...web.listenAddress];
}

/** An Alertmanager's base URL: http(s), no query or fragment (the gate appends /api/v2/alerts). */
const alertmanagerUrl = z.string().refine(
  (text) => {
    try {
      const u = new URL(text);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.search === '' && u.hash === '' && u.hostname !== '';
    } catch {
      return false;
    }
  },
  { message: 'not an Alertmanager base URL such as http://alertmanager:9093 (http or https, no query)' },
);

export const gateSchema = z
  .object({
    /** A file holding the bearer token Alertmanager must send to the webhook; none = no auth. */
    bearerTokenFile: z.string().min(1).optional(),
    /** Alerts carrying this label value pause non-core calls (the P0). */
    pauseLabel: z.string().min(1).default('priority'),
    pauseValue: z.string().min(1).default('P0'),
    /** Firing pause alerts held at once (by fingerprint); past it new ones are dropped and counted. */
    maxAlerts: z.number().int().min(1).max(100_000).default(1000),
    /** Largest webhook body; larger ones get 413. */
    maxBodyBytes: z
      .number()
      .int()
      .min(1024)
      .max(64 * 1024 * 1024)
      .default(1024 * 1024),
    /**
     * Alertmanager base URLs (http://alertmanager:9093) whose API the gate reads, in order: the first that
     * answers wins (peers of one HA cluster, each holding every alert). Empty = push only (the webhook).
     */
    alertmanagers: z.array(alertmanagerUrl).max(16).default([]),
    /** How often the gate reads the firing pause alerts from `alertmanagers`; a webhook push also reads at once. */
    pollInterval: duration.default(10_000),
    /** One read of one Alertmanager; past it the next in the list is asked. */
    pollTimeout: duration.default(2_000),
    /**
     * A pushed alert not sent again for this long stops counting: just over Alertmanager's default
     * repeat_interval (4h) plus one default group_interval (5m) in which that repeat is flushed.
     */
    alertTtl: duration.default(15_300_000),
    /** Label → value: only pause alerts carrying these (aggregation labels) pause this gate; {} = every one. */
    scope: z.record(labelName, z.string().min(1)).default({}),
  })
  .strict()
  .refine((g) => g.pollTimeout <= g.pollInterval, { message: '`pollTimeout` must be at most `pollInterval`', path: ['pollTimeout'] })
  .refine((g) => g.alertTtl > g.pollInterval, { message: '`alertTtl` must be longer than `pollInterval`', path: ['alertTtl'] });

/** ingest.otlp: the OTLP/HTTP logs receiver (src/ingest/otlp-router.ts, docs/otlp.md). */
const otlpAttribute = z.string().min(1);
const otlpGenericSchema = z
  .object({
    time: otlpAttribute.optional(),
    latency: otlpAttribute.default('duration'),
    latencyUnit: z.enum(['s', 'ms', 'us', 'ns']).default('ms'),
    status: otlpAttribute.default('http.response.status_code'),
    model: otlpAttribute.default('gen_ai.request.model'),
    route: otlpAttribute.default('http.route'),
    cohort: otlpAttribute.default('cohort'),
    responseHeaderPrefix: otlpAttribute.default('http.response.header.'),
    requestHeaderPrefix: otlpAttribute.default('http.request.header.'),
    tokensInput: otlpAttribute.default('gen_ai.usage.input_tokens'),
    tokensOutput: otlpAttribute.default('gen_ai.usage.output_tokens'),
    tokensCacheRead: otlpAttribute.default('gen_ai.usage.cache_read.input_tokens'),
    tokensCacheCreation: otlpAttribute.default('gen_ai.usage.cache_creation.input_tokens'),
  })
  .strict();
export const otlpSchema = z
  .object({
    /** Off by default, like ingest itself; needs no `ingest.enabled`. */
    enabled: z.boolean().default(false),
    /** Which mapping reads the log records: decided per resource of each request on evidence (`auto`), or fixed. */
    preset: z.enum(['auto', 'otlp-envoy', 'otlp-generic']).default('auto'),
    /** kvlist/array levels of a body or attribute read at most; deeper values read as null. */
    maxValueDepth: z.number().int().min(1).max(64).default(8),
    /** otlp-generic: the attribute names (else body keys) each field is read from. */
    generic: otlpGenericSchema.default(() => otlpGenericSchema.parse({})),
    /**
     * Target label ← resource attribute. Unset: cluster ← k8s.cluster.name, namespace ← k8s.namespace.name
     * (ingest/otlp-resource-labels.ts), of which only the labels in pack.aggregationLabels are applied.
     */
    resourceLabels: z.record(labelName, otlpAttribute).optional(),
    /** Resource label sets counted apart before a new one counts under __other__. */
    maxResourceLabelSets: z.number().int().min(1).max(1024).default(32),
  })
  .strict();

/** The label names of the exporter's own series: a resource label of the same name would be written twice in a series. */
export const EXPORTER_SERIES_LABELS = [
  'hit',
  'status_class',
  'model',
  'route',
  'cohort',
  'outcome',
  'reason',
  'mode',
  'state',
  'defect',
  'type',
  'source',
  'header',
  'label',
  'family',
  'kind',
  'preset',
  'basis',
  'envelope',
  'quantile',
  'le',
] as const;

/** POST /api/v1/ingest: NDJSON pushed over HTTP, fed to the same pipeline as files and stdin (source "http"). */
export const ingestSchema = z
  .object({
    /** Off by default: anyone who can reach the port could otherwise write records the alerts evaluate. */
    enabled: z.boolean().default(false),
    /** A file holding the bearer token pushers must send; none = no token (basic auth may still apply). */
    bearerTokenFile: z.string().min(1).optional(),
    /** Largest body accepted, counted both as received and after gzip decompression. */
    maxBodyBytes: z
      .number()
      .int()
      .min(1024)
      .max(1024 * 1024 * 1024)
      .default(10 * 1024 * 1024),
    /** Body bytes held at once across concurrent requests; past it a request gets 429 and is retried. */
    maxInFlightBytes: z
      .number()
      .int()
      .min(1024)
      .max(4 * 1024 * 1024 * 1024)
      .default(64 * 1024 * 1024),
    /**
     * Time a request has to send its whole body; past it, 408 and its bytes go back to maxInFlightBytes.
     * At most Node's own request timeout (5 m), which would otherwise end the request first.
     */
    bodyReadTimeout: duration.default(30_000).refine((ms) => ms <= 300_000, 'must be at most 5m (Node ends a request after 5 m anyway)'),
    /** Body bytes one client address may hold at once, all its connections together; unset = max(maxBodyBytes, maxInFlightBytes / 4). */
    maxInFlightBytesPerSource: z.number().int().min(1024).optional(),
    /** A body must keep arriving at this many bytes per second over each minBodyRateWindow, else 408; 0 = no minimum. */
    minBodyBytesPerSecond: z
      .number()
      .int()
      .min(0)
      .default(16 * 1024),
    minBodyRateWindow: duration.default(5_000),
    /** After a body of its was cut for arriving under minBodyBytesPerSecond, a client address gets 429 for this long. */
    slowSourceCooldown: duration.default(30_000),
    /** POST /v1/logs: OTLP/HTTP logs (a Collector's otlphttp exporter, Envoy's OpenTelemetry access logger), under the limits above. */
    otlp: otlpSchema.default(() => otlpSchema.parse({})),
  })
  .strict()
  .refine((i) => i.maxInFlightBytes >= i.maxBodyBytes, {
    message: '`maxInFlightBytes` must be at least `maxBodyBytes`, or a body of the largest size could never be accepted',
    path: ['maxInFlightBytes'],
  })
  .refine((i) => i.maxInFlightBytesPerSource === undefined || (i.maxInFlightBytesPerSource >= i.maxBodyBytes && i.maxInFlightBytesPerSource <= i.maxInFlightBytes), {
    message: '`maxInFlightBytesPerSource` must be from `maxBodyBytes` to `maxInFlightBytes`, or a body of the largest size could never be accepted',
    path: ['maxInFlightBytesPerSource'],
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
    maxCatchUpBytes: z
      .number()
      .int()
      .min(0)
      .default(256 * 1024 * 1024),
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
    exporterAbsent: forDuration.default(600_000),
    exporterGone: forDuration.default(300_000),
    requestsStopped: forDuration.default(300_000),
    sourceStalled: forDuration.default(300_000),
    parseErrorsHigh: forDuration.default(600_000),
    headersNotFound: forDuration.default(0),
    // The early warnings read a 1 h level, which is the hold: a `for` on top would delay them past the hour.
    warmupSliding: forDuration.default(0),
    driftCreeping: forDuration.default(0),
  })
  .strict();

/** Labels the pack itself sets or splits by: an aggregation label of the same name would collide with them. */
export const RESERVED_AGGREGATION_LABELS = ['instance', 'le', 'hit', 'cohort', 'slo', 'alertname', 'severity', 'priority', 'source', 'sloth_id', 'sloth_service', 'sloth_slo', 'sloth_window'] as const;

const aggregationLabels = cappedArray(labelName, 'pack.aggregationLabels')
  .min(1)
  .superRefine((labels, ctx) => {
    const seen = new Set<string>();
    for (const l of labels) {
      if (seen.has(l)) ctx.addIssue({ code: 'custom', message: `"${l}" is listed twice` });
      seen.add(l);
      if ((RESERVED_AGGREGATION_LABELS as readonly string[]).includes(l)) {
        ctx.addIssue({ code: 'custom', message: `"${l}" cannot be an aggregation label: the pack ${l === 'instance' ? 'sums instances away (that is what aggregating means)' : 'uses it itself'}` });
      }
    }
    // The dashboards' job variable and the exporter's identity in every alert.
    if (!seen.has('job')) ctx.addIssue({ code: 'custom', message: 'must include job (e.g. [cluster, namespace, job])' });
  });

/** The label matchers that find the exporter's own series, e.g. `job="zero-plane-exporter"` or `job=~"llm-gateway.*", namespace="llm"`. */
const selector = z
  .string()
  .superRefine((text, ctx) => {
    const problem = matcherListProblem(text);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: `not a list of PromQL label matchers such as job="zero-plane-exporter" or job=~"llm-gateway.*", namespace="llm": ${problem}` });
  })
  .transform((text) => text.trim());

const httpUrl = z.string().regex(/^https?:\/\/[^\s]+$/, 'not an http(s) URL');

/**
 * The ticket alerts that warn before a hard threshold breaks: warm-up efficiency sliding below its own long-term
 * level while still above signals.warmupEfficiencyTarget, p99 drift creeping up inside the band.
 */
const earlyWarningSchema = z
  .object({
    /** The short level both alerts read (warm-up efficiency and p99 drift over this window). */
    window: duration.default(3_600_000),
    /** The long-term level warm-up efficiency is compared with; a whole number of `window`s (it is summed over them). */
    baselineWindow: duration.default(604_800_000),
    /** ZeroPlaneWarmupEfficiencySliding: the short level is more than this (a ratio: 0.005 = 0.5 points) below the long-term one. */
    warmupDrop: z.number().gt(0).lt(1).default(0.005),
    /** ZeroPlaneP99DriftCreeping: p99 drift over `window` above this (a ratio, below signals.tolerance). */
    driftAbove: z.number().gt(0).lt(1).default(0.03),
  })
  .strict()
  .superRefine((e, ctx) => {
    if (e.baselineWindow <= e.window || e.baselineWindow % e.window !== 0) {
      ctx.addIssue({ code: 'custom', path: ['baselineWindow'], message: 'must be a whole multiple (2 or more) of pack.earlyWarning.window: the long-term level sums the short windows' });
    }
  });

/** How the alerting pack is generated: windows, `for` durations, selectors, links. */
export const packSchema = z
  .object({
    rateWindow: duration.default(300_000),
    evaluationInterval: duration.default(30_000),
    /** The labels every recording rule keeps, every join matches on, Alertmanager groups and inhibits on. */
    aggregationLabels: aggregationLabels.default(['job']),
    /** How the pack finds the exporter's own series (raw metrics, `up`, the dashboards' variables). */
    selector: selector.default('job="zero-plane-exporter"'),
    /** Where docs/runbook.md is published: every alert's runbook_url is this plus `#alertname`. */
    runbookUrl: httpUrl.default('https://github.com/zero-plane/zero-plane-exporter/blob/main/docs/runbook.md'),
    /** ZeroPlaneLogSourceStalled: no new record for this long; ZeroPlaneRequestsStopped: no request counted for this long. */
    stalledAfter: duration.default(600_000),
    /**
     * ZeroPlaneExporterGone: an aggregation group that had an exporter target this long ago and has none now.
     * It fires for this long after the last target left (then the group is forgotten).
     */
    goneLookback: duration.default(3_600_000),
    /**
     * keep_firing_for of the alerts on the rate window (band, P0, canary, hit rate, degraded, warm-up, opt-in,
     * parse errors): a window that dips under its threshold or its minRequests for a moment does not resolve
     * the alert, so one incident is one page, not a resolve and a second page (Prometheus >= 2.42). The
     * gate resumes non-core calls this long after the P0's condition clears.
     */
    keepFiringFor: forDuration.default(300_000),
    for: forSchema.default(() => forSchema.parse({})),
    earlyWarning: earlyWarningSchema.default(() => earlyWarningSchema.parse({})),
    /** zero_plane:p99_drift:max<window> and the deterministic bandwidth demand: the maximum of p99 drift over this window. */
    capacityWindow: duration.default(86_400_000),
    /** zero_plane_cohort:p99_drift:stddev_over_time<window>: the σ of each cohort's 5 m p99 drift over this window. */
    dispersionWindow: duration.default(3_600_000),
  })
  .strict();

/** Traffic guards: a window with fewer events than this cannot fire the alerts that read a ratio over it. */
export const alertsSchema = z
  .object({
    /**
     * Events a window needs (hit requests for the latency, P0 and canary alerts, requests for the hit rate,
     * warm-up outcomes for warm-up efficiency, SLO events in a burn-rate pair's long window).
     */
    minRequests: z.number().int().min(1).default(200),
  })
  .strict();

const objective = z.number().gt(0).lt(1);

/**
 * One multi-window burn-rate condition: the budget burns `factor` times too fast over both windows. Give the
 * factor, or the share of the period's budget spent over the long window when it fires (the SRE workbook's
 * formula: factor = budgetShare × period / long, so the factors follow slos.period as Sloth's do).
 */
const burnWindow = z
  .object({ factor: z.number().positive().optional(), budgetShare: z.number().gt(0).max(1).optional(), long: duration, short: duration })
  .strict()
  .refine((w) => w.short < w.long, { message: '`short` must be shorter than `long`' })
  .refine((w) => (w.factor === undefined) !== (w.budgetShare === undefined), { message: 'give exactly one of `factor` and `budgetShare`' });

// The workbook's shares: 2 % of the budget in 1 h, 5 % in 6 h (page), 10 % in 1 d and in 3 d (ticket). Over
// 28 d: 13.44×, 5.6×, 2.8×, 0.933×; over 30 d: 14.4×, 6×, 3×, 1×.
const defaultBurnWindows = {
  page: [
    { budgetShare: 0.02, long: 3_600_000, short: 300_000 },
    { budgetShare: 0.05, long: 21_600_000, short: 1_800_000 },
  ],
  ticket: [
    { budgetShare: 0.1, long: 86_400_000, short: 7_200_000 },
    { budgetShare: 0.1, long: 259_200_000, short: 21_600_000 },
  ],
};

/** Service-level objectives: error-budget recording rules and multi-window multi-burn-rate alerts. */
export const slosSchema = z
  .object({
    /** The period the error budget is counted over. */
    period: duration.default(2_419_200_000),
    /** The error budget adds up increases over this step (recorded per instance): a shorter one costs more samples. */
    budgetStep: duration.default(3_600_000),
    /** The `sloth_service` label of the Sloth-convention SLO series (slo:*, sloth_slo_info). */
    service: z
      .string()
      .regex(/^[a-zA-Z0-9_.-]+$/, 'letters, digits, `_`, `.` and `-` only')
      .default('zero-plane'),
    /** Share of requests served by Zero-Plane. */
    hitRate: z
      .object({ objective: objective.default(0.994) })
      .strict()
      .default({ objective: 0.994 }),
    /** Share of Zero-Plane requests at or under the ceiling (baseline × (1 + tolerance)). */
    latency: z
      .object({ objective: objective.default(0.99) })
      .strict()
      .default({ objective: 0.99 }),
    /** Page (severity critical) when any of these holds; SRE workbook defaults. */
    page: cappedArray(burnWindow, 'slos.page')
      .min(1)
      .default(() => defaultBurnWindows.page.map((w) => ({ ...w }))),
    /** Ticket (severity warning) when any of these holds. */
    ticket: cappedArray(burnWindow, 'slos.ticket')
      .min(1)
      .default(() => defaultBurnWindows.ticket.map((w) => ({ ...w }))),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.budgetStep > s.period) ctx.addIssue({ code: 'custom', path: ['budgetStep'], message: `${formatDuration(s.budgetStep)} is longer than slos.period (${formatDuration(s.period)})` });
    for (const tier of ['page', 'ticket'] as const) {
      s[tier].forEach((w, i) => {
        if (w.long > s.period) {
          ctx.addIssue({
            code: 'custom',
            path: [tier, i, 'long'],
            message: `${formatDuration(w.long)} is longer than slos.period (${formatDuration(s.period)}): give slos.page and slos.ticket windows that fit`,
          });
        }
      });
    }
  });

/**
 * `backtest` and `export`: old logs replayed on their own timeline. Each record is placed at its own time;
 * these say how far out of order it may come and which times are not believed.
 */
export const historySchema = z
  .object({
    /**
     * How long after a step ends its records may still arrive (in the order of the lines): gateways that log a
     * request's start time (Envoy, Kong, Traefik, HAProxy) write it out of order by up to its duration. A
     * later record is counted as late and skipped. Records this recent are held in memory.
     */
    lateness: duration.default(120_000),
    /**
     * Records of one file more than this apart (from a cluster's recent times) are different clusters: a stale
     * clock's burst, a jump (a quiet weekend), another host's clock (src/history/time-filter.ts).
     */
    maxGap: duration.default(86_400_000),
    /**
     * Records a cluster of a file's times needs to be believed; a smaller one is skipped as time outliers
     * (unless the file has no larger one). Up to 8 clusters per file each hold fewer than this in memory.
     */
    minCluster: z.number().int().min(1).max(100_000).default(20),
    /** Records before this time are far-out (epoch 0 from an unset clock, 1970). */
    notBefore: instant.default(Date.parse('2000-01-01T00:00:00Z')),
    /** Records more than this after the command's own clock are far-out (the year 3000). */
    maxAhead: duration.default(86_400_000),
    /** `compare`: the bootstrap over windows (src/history/compare.ts). */
    compare: z
      .object({
        /** Resamples of the bootstrap. */
        iterations: z.number().int().min(100).max(1_000_000).default(2000),
        /** The interval's confidence. */
        confidence: z.number().gt(0).lt(1).default(0.95),
        /** Seed of the resampling: the same input and seed give the same interval. */
        seed: z.number().int().min(0).max(4_294_967_295).default(1),
        /** Windows each group needs (with at least alerts.minRequests Zero-Plane requests each) for a verdict. */
        minWindows: z.number().int().min(2).default(10),
      })
      .strict()
      .default({ iterations: 2000, confidence: 0.95, seed: 1, minWindows: 10 }),
    /**
     * `backtest --compare-naive`: the alert the pack's are measured against, as a team without the pack
     * writes it: the mean latency of every request over pack.rateWindow above factor × signals.baselineSeconds for `for`.
     */
    naive: z
      .object({ factor: z.number().gt(0).max(100).default(1.1), for: duration.default(300_000) })
      .strict()
      .default({ factor: 1.1, for: 300_000 }),
  })
  .strict();

export const dashboardsSchema = z
  .object({
    /** Grafana's `editable`: off, so a provisioned dashboard is changed in the generator, not in the UI. */
    editable: z.boolean().default(false),
  })
  .strict();

/** The example Alertmanager config (alerts/alertmanager.example.yml): receivers and the places to fill in. */
export const alertmanagerSchema = z
  .object({
    pager: z
      .object({
        name: z.string().min(1).default('zero-plane-pager'),
        /** PagerDuty Events API v2 routing key, read by Alertmanager from this file. */
        routingKeyFile: z.string().min(1).default('/etc/alertmanager/secrets/pagerduty-routing-key'),
      })
      .strict()
      .default({ name: 'zero-plane-pager', routingKeyFile: '/etc/alertmanager/secrets/pagerduty-routing-key' }),
    chat: z
      .object({
        name: z.string().min(1).default('zero-plane-chat'),
        /** Slack incoming-webhook URL, read by Alertmanager from this file. */
        apiUrlFile: z.string().min(1).default('/etc/alertmanager/secrets/slack-api-url'),
        channel: z.string().min(1).default('#zero-plane-alerts'),
      })
      .strict()
      .default({ name: 'zero-plane-chat', apiUrlFile: '/etc/alertmanager/secrets/slack-api-url', channel: '#zero-plane-alerts' }),
    gate: z
      .object({
        name: z.string().min(1).default('load-shedding-gate'),
        /** The exporter's webhook as Alertmanager reaches it; unset = http://zero-plane-exporter:<web.listenAddress port>/api/v1/alerts/webhook. */
        url: httpUrl.optional(),
      })
      .strict()
      .default({ name: 'load-shedding-gate' }),
    /** A notification still firing unchanged is sent again after this long (pages and tickets alike). */
    repeatInterval: duration.default(43_200_000),
  })
  .strict()
  .superRefine((a, ctx) => {
    const names = [a.pager.name, a.chat.name, a.gate.name];
    if (new Set(names).size !== names.length) ctx.addIssue({ code: 'custom', message: `receiver names must differ: ${names.join(', ')}` });
  });

const k8sName = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'a Kubernetes name: lower-case letters, digits and "-", starting and ending alphanumeric')
  .max(63);
/** A Kubernetes resource quantity ("100m", "1", "128Mi"). */
const quantity = z.string().regex(/^(\d+(\.\d+)?|\.\d+)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/, 'a Kubernetes quantity such as 100m, 1, 128Mi');
const labelKey = z.string().regex(/^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/, 'a Kubernetes label key (prefix/name)');
const labelValue = z
  .string()
  .regex(/^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/, 'a Kubernetes label value (63 characters: letters, digits, "-", "_", ".")')
  .max(63);
const resources = z.object({ cpu: quantity, memory: quantity }).strict();
/** A non-root uid/gid for a container (0 is root; 65535 and up collide with user namespaces' ranges on some nodes). */
const podUser = z.number().int().min(1).max(65534);

/** `generate` writes deploy/kubernetes/ from these (the sidecar example, monitors, rules, dashboards). */
export const kubernetesSchema = z
  .object({
    /** Name of the exporter's metrics Service; a ServiceMonitor makes it the `job` label, so keep it equal to the job in pack.selector. */
    name: k8sName.default('zero-plane-exporter'),
    /** Namespace set by the kustomization; empty = kubectl's current namespace. */
    namespace: z.union([k8sName, z.literal('')]).default(''),
    /** The gateway Deployment (nginx with the exporter as a sidecar) and its Service. */
    gatewayName: k8sName.default('llm-gateway'),
    replicas: z.number().int().min(1).default(2),
    /**
     * What the sidecar's gate reads when gate.alertmanagers is empty: kube-prometheus-stack's Alertmanager
     * (the operator's alertmanager-operated Service; FILL IN its namespace), so every replica agrees.
     */
    alertmanagers: z
      .array(z.string().regex(/^https?:\/\/[^\s?#]+$/, 'an http:// or https:// base URL'))
      .min(1)
      .default(['http://alertmanager-operated.monitoring.svc:9093']),
    /** What the sidecar's nginx proxies to. */
    upstream: z
      .string()
      .regex(/^https?:\/\/[^\s;{}'"]+$/, 'an http:// or https:// URL')
      .default('http://llm-api:8080'),
    image: z.string().min(1).default('zero-plane-exporter:0.1.0'),
    gatewayImage: z.string().min(1).default('nginx:1.27'),
    /** kube-prometheus-stack's Prometheus selects ServiceMonitors, PodMonitors and PrometheusRules with `release: <helm release>`; empty = no such label. */
    release: z.union([labelValue, z.literal('')]).default('kube-prometheus-stack'),
    /** Extra labels on every object. */
    labels: z
      .record(labelKey, labelValue)
      .refine(...withinCap('deploy.kubernetes.labels'))
      .default({}),
    scrapeInterval: duration.default(15_000),
    /**
     * The exporter container, sized from measured peaks (docs/deployment.md#memory): steady 82–89 MiB RSS at 100k
     * lines/s, the first scan of a 214 MB log 93–96 MiB, 200 concurrent scrapes of 27k lines up to 232 MiB; the limit
     * is that peak with ~65 % headroom, so an OOM kill (which restarts the whole container) stays out of reach.
     */
    resources: z
      .object({ requests: resources.default({ cpu: '100m', memory: '128Mi' }), limits: resources.default({ cpu: '1', memory: '384Mi' }) })
      .strict()
      .default({ requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '1', memory: '384Mi' } }),
    /** uid and gid of nginx and the log rotator, and the Pod's fsGroup: the shared log and the checkpoint volume belong to it. */
    gatewayUser: podUser.default(10001),
    /** The exporter's own uid and gid (not the gateway's): it reads the log through the fsGroup and cannot signal or ptrace nginx. */
    exporterUser: podUser.default(10002),
    /**
     * The exporter's liveness probe on /-/healthy, which answers from the start, also during the first scan (only
     * /-/ready waits for that). It restarts the container only when /-/healthy has not answered for
     * livenessPeriodSeconds × livenessFailureThreshold (60 s). No readiness probe and no startup probe: the kubelet
     * counts a container that has not passed either as not ready, and every container's readiness is the Pod's.
     */
    probes: z
      .object({
        livenessPeriodSeconds: z.number().int().min(1).default(10),
        livenessTimeoutSeconds: z.number().int().min(1).default(5),
        livenessFailureThreshold: z.number().int().min(1).default(6),
      })
      .strict()
      .default({ livenessPeriodSeconds: 10, livenessTimeoutSeconds: 5, livenessFailureThreshold: 6 }),
    /** Seconds `serve` waits, inside its container, before it is started again after it exited (the container keeps running). */
    exporterRestartSeconds: z.number().int().min(1).max(300).default(2),
    /** PodDisruptionBudget of the gateway: at most this many of its Pods evicted at once (a drain waits for the rest). */
    maxUnavailable: z.number().int().min(1).default(1),
    /** Topology spread of the gateway replicas: at most maxSkew more on one value of topologyKey than on another. */
    topologySpread: z
      .object({
        topologyKey: labelKey.default('kubernetes.io/hostname'),
        maxSkew: z.number().int().min(1).default(1),
        whenUnsatisfiable: z.enum(['DoNotSchedule', 'ScheduleAnyway']).default('DoNotSchedule'),
      })
      .strict()
      .default({ topologyKey: 'kubernetes.io/hostname', maxSkew: 1, whenUnsatisfiable: 'DoNotSchedule' }),
    /**
     * A NetworkPolicy on the gateway Pods: the exporter's port only from namespaces matching monitoringNamespaceSelector
     * (matchLabels). Ingress only: egress is left alone. gatewayIngress: the gateway's port stays open to every source; set
     * false when a NetworkPolicy of your own governs it (policies add up, so this one would open it again).
     */
    networkPolicy: z
      .object({
        enabled: z.boolean().default(true),
        monitoringNamespaceSelector: z
          .record(labelKey, labelValue)
          .refine((m) => Object.keys(m).length > 0, { message: 'at least one label: an empty selector would admit every namespace' })
          .default({ 'kubernetes.io/metadata.name': 'monitoring' }),
        gatewayIngress: z.boolean().default(true),
      })
      .strict()
      .default({ enabled: true, monitoringNamespaceSelector: { 'kubernetes.io/metadata.name': 'monitoring' }, gatewayIngress: true }),
    /** The sidecar's log is renamed to .1 (nginx reopens it) past this size, so the emptyDir stays within about twice it. */
    logRotateBytes: z
      .number()
      .int()
      .min(1024 * 1024)
      .default(100 * 1024 * 1024),
    /** The Grafana sidecar's defaults in kube-prometheus-stack: label grafana_dashboard="1"; folders need folderAnnotation set there. */
    dashboards: z
      .object({
        label: labelKey.default('grafana_dashboard'),
        labelValue: labelValue.default('1'),
        folderAnnotation: labelKey.default('grafana_folder'),
        folder: z.string().min(1).default('Zero-Plane'),
      })
      .strict()
      .default({ label: 'grafana_dashboard', labelValue: '1', folderAnnotation: 'grafana_folder', folder: 'Zero-Plane' }),
  })
  .strict()
  .superRefine((k, ctx) => {
    if (k.exporterUser === k.gatewayUser) ctx.addIssue({ code: 'custom', path: ['exporterUser'], message: `must differ from gatewayUser (${k.gatewayUser}): the exporter runs as its own user` });
  });

/** `generate` writes deploy/systemd/ from these. */
export const systemdSchema = z
  .object({
    /** Where the production install puts the CLI (`npm install -g` puts it in /usr/local/bin). */
    binary: z.string().startsWith('/').default('/usr/local/bin/zero-plane-exporter'),
    configFile: z.string().startsWith('/').default('/etc/zero-plane-exporter/zero-plane.yml'),
    /** Directories of the logs it follows: the only part of /var/log the service sees, read-only. */
    logDirectories: cappedArray(z.string().startsWith('/var/log/'), 'deploy.systemd.logDirectories').min(1).default(['/var/log/nginx']),
    /** Groups whose files it reads (Debian's nginx logs are root:adm 0640). */
    supplementaryGroups: cappedArray(z.string().regex(/^[a-z_][a-z0-9_-]*$/), 'deploy.systemd.supplementaryGroups').default(['adm']),
  })
  .strict();

export const deploySchema = z
  .object({
    kubernetes: kubernetesSchema.default(() => kubernetesSchema.parse({})),
    systemd: systemdSchema.default(() => systemdSchema.parse({})),
  })
  .strict();

export const configSchema = z
  .object({
    input: inputSchema.default(() => inputSchema.parse({})),
    headers: headersSchema.default(() => headersSchema.parse({})),
    signals: signalsSchema.default(() => signalsSchema.parse({})),
    window: windowSchema.default(() => windowSchema.parse({})),
    metrics: metricsSchema.default(() => metricsSchema.parse({})),
    repeats: repeatsSchema.default(() => repeatsSchema.parse({})),
    sources: sourcesSchema.default(() => sourcesSchema.parse({})),
    parse: parseSchema.default(() => parseSchema.parse({})),
    web: webSchema.default(() => webSchema.parse({})),
    gate: gateSchema.default(() => gateSchema.parse({})),
    ingest: ingestSchema.default(() => ingestSchema.parse({})),
    pack: packSchema.default(() => packSchema.parse({})),
    alerts: alertsSchema.default(() => alertsSchema.parse({})),
    slos: slosSchema.default(() => slosSchema.parse({})),
    history: historySchema.default(() => historySchema.parse({})),
    dashboards: dashboardsSchema.default(() => dashboardsSchema.parse({})),
    alertmanager: alertmanagerSchema.default(() => alertmanagerSchema.parse({})),
    checkpoint: checkpointSchema.default(() => checkpointSchema.parse({})),
    deploy: deploySchema.default(() => deploySchema.parse({})),
    probe: probeSchema.default(() => probeSchema.parse({})),
  })
  .strict()
  .superRefine((c, ctx) => {
    // The P0 carries only the aggregation labels: a scope on any other label would never match, and the gate never pause.
    for (const label of Object.keys(c.gate.scope)) {
      if (!c.pack.aggregationLabels.includes(label)) {
        ctx.addIssue({
          code: 'custom',
          path: ['gate', 'scope', label],
          message: `"${label}" is not one of pack.aggregationLabels (${c.pack.aggregationLabels.join(', ')}): the P0 carries only those labels`,
        });
      }
    }
  })
  .superRefine((c, ctx) => {
    if (c.pack.earlyWarning.window <= c.pack.rateWindow) {
      ctx.addIssue({
        code: 'custom',
        path: ['pack', 'earlyWarning', 'window'],
        message: `must be longer than pack.rateWindow (${formatDuration(c.pack.rateWindow)}): the early warnings read a longer level than the hard alerts`,
      });
    }
    // Creeping "inside the band": a level at or above the band's edge would be ZeroPlaneP99DriftOutOfBand's.
    if (c.pack.earlyWarning.driftAbove >= c.signals.tolerance) {
      ctx.addIssue({
        code: 'custom',
        path: ['pack', 'earlyWarning', 'driftAbove'],
        message: `must be below signals.tolerance (${c.signals.tolerance}): drift creeping means inside the band (its default 0.03 fits the default ±5 % band; set it for a narrower one)`,
      });
    }
  })
  .superRefine((c, ctx) => mappedHeadersAreRead(c.input.headers, c.headers, ctx))
  .superRefine((c, ctx) => {
    // An OTLP resource label becomes a target label the pack aggregates by: any other would only split series.
    for (const label of Object.keys(c.ingest.otlp.resourceLabels ?? {})) {
      const path = ['ingest', 'otlp', 'resourceLabels', label];
      if ((EXPORTER_SERIES_LABELS as readonly string[]).includes(label))
        ctx.addIssue({ code: 'custom', path, message: `"${label}" is a label of the exporter's own series; map the attribute to an aggregation label` });
      else if (!c.pack.aggregationLabels.includes(label))
        ctx.addIssue({
          code: 'custom',
          path,
          message: `"${label}" is not one of pack.aggregationLabels (${c.pack.aggregationLabels.join(', ')}): only those are applied as target labels; add it there or remove it`,
        });
    }
  });

/** input.headers may only map headers the signals read, each on its own side (response or request). */
function mappedHeadersAreRead(mapped: { response: Record<string, string>; request: Record<string, string> }, headers: z.output<typeof headersSchema>, ctx: z.RefinementCtx): void {
  const read = {
    response: [headers.layerId.name, headers.delayProfile.name, headers.cached.name, headers.downgradeReason.name].map((n) => n.toLowerCase()),
    request: [headers.optIn.name.toLowerCase()],
  };
  for (const side of ['response', 'request'] as const) {
    const other = side === 'response' ? 'request' : 'response';
    for (const name of Object.keys(mapped[side])) {
      const lower = name.toLowerCase();
      if (read[side].includes(lower)) continue;
      ctx.addIssue({
        code: 'custom',
        path: ['input', 'headers', side, name],
        message: read[other].includes(lower)
          ? `${name} is a ${other} header: map it under input.headers.${other}`
          : `${name} is not a header the exporter reads; the ${side} headers are ${read[side].join(', ')} (names from \`headers\`)`,
      });
    }
  }
}

export type Config = z.output<typeof configSchema>;

/** record/ declares the `input` it reads (it ranks below config/): a Config must be one, or this fails to compile. */
export type ConfigIsRecordConfig = Config extends RecordConfig ? true : never;
const configIsRecordConfig: ConfigIsRecordConfig = true;
void configIsRecordConfig;

/** The built-in defaults: what runs when no `--config.file` is given. */
export function defaultConfig(): Config {
  return configSchema.parse({});
}
