// The OpenTelemetry GenAI semantic-convention metrics (semconv 1.37+, gen-ai-metrics.md), named as
// Prometheus names them when it translates OTLP (dots to underscores, the unit as a suffix, `{token}` dropped),
// with the semconv's advised bucket boundaries, written without any OTel SDK: a Grafana dashboard built
// for an OTel GenAI instrumentation reads them as they are. Beside them, the Anthropic token breakdown
// (cache reads and writes) the semconv's two token types fold together.
import { CounterFamily, HistogramFamily } from '../metrics/families.js';
import { LabelLimiter, type LabelOverflowReason } from '../metrics/label-limiter.js';
import type { TokenUsage } from './response-observer.js';

/** gen_ai.client.operation.duration's advised boundaries, seconds. */
export const OPERATION_DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92] as const;
/** gen_ai.client.token.usage's advised boundaries, tokens. */
export const TOKEN_USAGE_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864] as const;
/** gen_ai.server.time_to_first_token's advised boundaries, seconds. */
export const TIME_TO_FIRST_TOKEN_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0] as const;

/**
 * `error.type` values: the Messages API's error types as it names them, or `_OTHER` (the semconv's
 * fallback) for anything else, plus the client's own for calls with no usable answer. A closed set.
 */
export const ANTHROPIC_ERROR_TYPES = [
  'invalid_request_error',
  'authentication_error',
  'permission_error',
  'not_found_error',
  'request_too_large',
  'rate_limit_error',
  'api_error',
  'overloaded_error',
  'billing_error',
  'timeout_error',
] as const;
export const CLIENT_ERROR_TYPES = ['aborted', 'connection_error', 'body_cancelled', 'body_error', '_OTHER'] as const;

const KNOWN_ERRORS: ReadonlySet<string> = new Set([...ANTHROPIC_ERROR_TYPES, ...CLIENT_ERROR_TYPES]);

/** The bounded error.type of a response: the body's error type when it is a known one, else `_OTHER`. */
export function errorTypeOf(status: number, bodyErrorType: string | undefined): string {
  if (bodyErrorType !== undefined) return KNOWN_ERRORS.has(bodyErrorType) ? bodyErrorType : '_OTHER';
  return status >= 400 ? '_OTHER' : '';
}

export const TOKEN_TYPES = ['input', 'output', 'cache_read', 'cache_creation'] as const;

/** One GenAI operation as observed: what the families take. */
export interface GenAiOperation {
  operation: string;
  requestModel: string;
  responseModel: string;
  /** '' when the operation succeeded. */
  errorType: string;
  /** Call to the last byte of the response, seconds; undefined when the body was not read through. */
  durationSeconds: number | undefined;
  /** Call to the first content_block_delta of a stream, seconds. */
  timeToFirstTokenSeconds: number | undefined;
  tokens: TokenUsage | undefined;
}

export interface GenAiLabels {
  provider: string;
  labelValueLimit: number;
  labelValueMaxBytes: number;
  /** Told of each label value replaced by __other__ or cut (instrumentFetch counts it in zero_plane_client_label_overflow_total). */
  onOverflow?: (label: GenAiBoundedLabel, reason: LabelOverflowReason) => void;
}

/** The labels whose values come from the calls (the models), so are bounded: labelValueLimit values, labelValueMaxBytes each. */
export const GEN_AI_BOUNDED_LABELS = ['gen_ai_request_model', 'gen_ai_response_model'] as const;
export type GenAiBoundedLabel = (typeof GEN_AI_BOUNDED_LABELS)[number];

export class GenAiMetrics {
  readonly duration = new HistogramFamily(
    'gen_ai_client_operation_duration_seconds',
    'GenAI operation duration (OpenTelemetry gen_ai.client.operation.duration): from the call to the last byte of the response.',
    ['gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_request_model', 'gen_ai_response_model', 'error_type'],
    OPERATION_DURATION_BUCKETS,
  );
  readonly tokenUsage = new HistogramFamily(
    'gen_ai_client_token_usage',
    'Tokens used per operation (OpenTelemetry gen_ai.client.token.usage); input counts the cache reads and writes too, as the semconv asks.',
    ['gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_request_model', 'gen_ai_response_model', 'gen_ai_token_type'],
    TOKEN_USAGE_BUCKETS,
  );
  readonly timeToFirstToken = new HistogramFamily(
    'gen_ai_server_time_to_first_token_seconds',
    'Time to the first text of a streamed response (OpenTelemetry gen_ai.server.time_to_first_token), measured by the client: the call to the first content_block_delta.',
    ['gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_request_model', 'gen_ai_response_model'],
    TIME_TO_FIRST_TOKEN_BUCKETS,
  );
  readonly tokens = new CounterFamily(
    'zero_plane_client_tokens_total',
    'Tokens as the Messages API reports them, by type (input: uncached input; cache_read; cache_creation; output) and served model.',
    ['type', 'model'],
  );
  private readonly requestModel: LabelLimiter;
  private readonly responseModel: LabelLimiter;

  constructor(private readonly labels: GenAiLabels) {
    const limiter = (label: GenAiBoundedLabel) => new LabelLimiter(labels.labelValueLimit, (why) => labels.onOverflow?.(label, why), labels.labelValueMaxBytes);
    this.requestModel = limiter('gen_ai_request_model');
    this.responseModel = limiter('gen_ai_response_model');
  }

  observe(op: GenAiOperation): void {
    const base = [op.operation, this.labels.provider, this.requestModel.map(op.requestModel), this.responseModel.map(op.responseModel)];
    if (op.durationSeconds !== undefined) this.duration.observe([...base, op.errorType], op.durationSeconds);
    if (op.errorType !== '') return;
    if (op.timeToFirstTokenSeconds !== undefined) this.timeToFirstToken.observe(base, op.timeToFirstTokenSeconds);
    const t = op.tokens;
    if (t === undefined) return;
    this.tokenUsage.observe([...base, 'input'], t.input + t.cacheRead + t.cacheCreation);
    this.tokenUsage.observe([...base, 'output'], t.output);
    const model = base[3] as string;
    this.tokens.inc(['input', model], t.input);
    this.tokens.inc(['output', model], t.output);
    this.tokens.inc(['cache_read', model], t.cacheRead);
    this.tokens.inc(['cache_creation', model], t.cacheCreation);
  }

  families() {
    return [this.duration, this.timeToFirstToken, this.tokenUsage, this.tokens];
  }
}
