// instrumentFetch(fetch, options): a fetch for the Anthropic SDK's `fetch` option (or any client that takes
// one). Before the call it checks the opt-in header (report, repair or reject); after it, it records the
// call's latency, status and response headers as a gateway log line, to an in-process pipeline, a log file
// `serve` follows, or a running exporter's ingest endpoint. Apart from a repaired opt-in header it passes
// the call through untouched, and nothing it does on its own account makes the call fail.
import type { OptInDefect } from '../signals/opt-in.js';
import { CallRecorder } from './call-record.js';
import { ClientMetrics, streamRefusalReason, type Destination } from './client-metrics.js';
import type { Family, MetricsSource } from './exposition.js';
import { requestFieldsOf, routeOf, urlOf, withHeader, type Fetch, type FetchInput } from './fetch-args.js';
import { errorTypeOf, GenAiMetrics } from './genai-metrics.js';
import { ResponseObservers, type BodyFacts } from './response-observer.js';
import { LazyInProcess } from './lazy-in-process.js';
import { IngestSink } from './ingest-sink.js';
import { drainAtExit, type Drainable } from './exit-hooks.js';
import { LogFileSink } from './log-file-sink.js';
import { OptInGuard, OptInHeaderError, type GuardVerdict } from './opt-in-guard.js';
import type { ClientConfig } from './client-config.js';
import { PromptHasher } from './prompt-hash.js';
import { parseInstrumentOptions, type ParsedDestination } from './instrument-options.js';
import type { ConfigInput, IngestOptions, LogFileOptions } from './option-types.js';
import { defaultWarn } from './options.js';
import { warnOnce, type RecordSink } from './record-sink.js';
import type { WindowSignals } from './window-signals.js';

export type { IngestOptions };

/** The request header a gateway logs the hash from, with `promptHash: { header: true }`. */
const PROMPT_HASH_HEADER = 'x-prompt-hash';

export interface InstrumentOptions {
  /**
   * What to do with a malformed opt-in header (docs/contract.md §2): `report` sends it as it is and counts it (the
   * default), `repair` sends it with invisible characters removed and whitespace trimmed when that makes
   * it exact (else reports it), `reject` sends nothing and rejects the call with an OptInHeaderError.
   * Every case warns once per defect kind.
   */
  optIn?: 'report' | 'repair' | 'reject';
  /**
   * Where each call's line goes: `in-process` (the default; mount metricsHandler() to expose it), a log
   * file in the default gateway format that `serve` follows, or batches to an exporter's /api/v1/ingest.
   */
  to?: 'in-process' | LogFileOptions | { ingest: IngestOptions };
  /**
   * The exporter's config (the same keys as its YAML): header names, the opt-in value, window, thresholds,
   * label limits. Its other sections (input, web, pack…) are accepted and not read.
   */
  config?: ConfigInput;
  /** The `cohort` label of every call (a canary deployment of the application, say); none by default. */
  cohort?: string;
  /**
   * The GenAI metrics' `gen_ai_provider_name` (default `anthropic`) and `gen_ai_operation_name` per route
   * (default `/v1/messages` → `chat`, `/v1/complete` → `text_completion`; calls to other routes are not
   * GenAI operations and feed only the Zero-Plane families).
   */
  genAi?: { provider?: string; operations?: Record<string, string> };
  /**
   * How response bodies are observed as the caller reads them (response-observer.ts): JSON bodies up to
   * `maxJsonBytes` (default 1 MiB) are parsed whole, longer ones from their ends; a body not read through
   * within `maxWait` (default 10m) is recorded with what is known. `false`: bodies are not looked at and
   * each call is recorded when its headers arrive (no tokens, no time to first token, no total duration).
   */
  observeBodies?: false | { maxJsonBytes?: number; maxWait?: number | string };
  /**
   * The longest flush() and close() (and the flushes at the process's end) wait for a log file or an
   * exporter before giving up on what is left, counted as dropped; default 5 s.
   */
  closeTimeout?: number | string;
  /**
   * Also flush on SIGTERM and SIGINT, then raise the signal again so the process ends as it would have
   * (unless the application listens for it itself). Off by default: the signals are the application's.
   */
  handleSignals?: boolean;
  /** Where warnings go; default process.emitWarning (code ZERO_PLANE_CLIENT). */
  warn?: (message: string) => void;
  /**
   * Record a hash of each call's normalized prompt (`prompt_hash` on its line; prompt-hash.ts), for the
   * repeated-questions report (docs/repeats.md); off by default. `header`: also send it as a request
   * header a gateway can log (`true` = x-prompt-hash). `key`: an HMAC key, so a hash cannot be matched
   * against guessed prompts. Warns once when two prompts differ only by what the normalization folds.
   */
  promptHash?: boolean | { header?: boolean | string; key?: string };
}

export interface InstrumentedFetch extends Fetch, MetricsSource {
  /**
   * In-process: the window's four signals and their verdicts now. Undefined for the other destinations,
   * and while the in-process pipeline is still loading (never once a call has returned).
   */
  signals(): WindowSignals | undefined;
  /** Resolves once every line recorded so far is written or sent (or given up on and counted). */
  flush(): Promise<void>;
  /**
   * Flushes (at most closeTimeout) and stops timers. The end of the process flushes too (beforeExit, and
   * SIGTERM/SIGINT with handleSignals), so it is needed only to flush earlier.
   */
  close(): Promise<void>;
  /** What became of the calls recorded so far: delivered, dropped (not delivered: counted, never silent), rejected, pending. */
  records(): { delivered: number; dropped: number; rejected: number; pending: number };
}

export function instrumentFetch(fetch: Fetch, options: InstrumentOptions = {}): InstrumentedFetch {
  if (typeof fetch !== 'function') throw new TypeError('instrumentFetch: the first argument must be a fetch function (globalThis.fetch, or the one your HTTP client uses)');
  const o = parseInstrumentOptions(options);
  const config = o.config;
  const warn = o.warn ?? defaultWarn;
  const once = warnOnce(warn);
  const destination: Destination = o.to === 'in-process' ? 'in-process' : 'logFile' in o.to ? 'log-file' : 'ingest';
  const metrics = new ClientMetrics(o.optIn, destination);
  const guard = new OptInGuard(config.headers.optIn, o.optIn);
  const recorder = new CallRecorder(config.headers);
  const sink = createSink(o.to, config, fetch, metrics, once, o.closeTimeout);
  const loading = sink instanceof LazyInProcess ? sink : undefined;
  const cohort = o.cohort;
  const ph = o.promptHash === false ? undefined : o.promptHash === true ? { header: false as const } : o.promptHash;
  const prompts = ph === undefined ? undefined : new PromptHasher({ key: 'key' in ph ? ph.key : undefined, warn: once });
  const promptHeader = ph?.header === true ? PROMPT_HASH_HEADER : ph?.header === false || ph === undefined ? undefined : ph.header.toLowerCase();
  const genAi = new GenAiMetrics({
    provider: o.genAi.provider,
    labelValueLimit: config.metrics.labelValueLimit,
    labelValueMaxBytes: config.metrics.labelValueMaxBytes,
    onOverflow: (label, reason) => metrics.labelOverflow.inc([label, reason]),
  });
  const operations = new Map(Object.entries(o.genAi.operations));
  const observers = o.observeBodies === false ? undefined : new ResponseObservers(o.observeBodies.maxJsonBytes, o.observeBodies.maxWait);
  // The process's end flushes what is buffered, so a script that makes its last call and returns loses
  // nothing; a body still open then (a stream being read at SIGTERM, a body nobody read) is recorded first
  // with what is known of it (unfinished), so its line is in that flush.
  const atEnd: Drainable = {
    pending: () => (observers?.size ?? 0) > 0 || sink.pending(),
    flush: () => {
      observers?.settle();
      return sink.flush();
    },
  };
  const detach = destination === 'in-process' ? () => undefined : drainAtExit(atEnd, o.handleSignals);

  const noteGuard = (verdict: GuardVerdict | OptInHeaderError): void => {
    const defect: OptInDefect | undefined = verdict instanceof OptInHeaderError ? verdict.defect : verdict.optIn.defect;
    const action = verdict instanceof OptInHeaderError ? 'rejected' : verdict.outcome;
    if (defect === undefined || (action !== 'reported' && action !== 'repaired' && action !== 'rejected')) return;
    metrics.guard.inc([action, defect]);
    const what =
      action === 'rejected' ? 'calls with it are rejected, not sent' : action === 'repaired' ? 'it is repaired before sending' : 'calls with it are sent as they are, and fall back off Zero-Plane';
    once(`${action}:${defect}`, `zero-plane client: the ${guard.headerName} request header is malformed (${defect}); ${what}. Counted in zero_plane_client_opt_in_guard_total.`);
  };

  const call = async (input: FetchInput, init?: RequestInit): Promise<Response> => {
    let verdict: GuardVerdict | undefined;
    let sendInit = init;
    try {
      const judged = guard.judge(input, init);
      verdict = judged.verdict;
      noteGuard(verdict);
      if (judged.replacement !== undefined) sendInit = withHeader(input, init, guard.headerName, judged.replacement);
    } catch (err) {
      if (err instanceof OptInHeaderError) {
        noteGuard(err);
        throw err;
      }
      // A header fetch would refuse anyway, or a bug of ours: the call goes out exactly as given.
      metrics.instrumentationErrors.inc(['guard']);
      verdict = undefined;
      sendInit = init;
    }
    let promptHash: string | undefined;
    if (prompts !== undefined) {
      try {
        promptHash = prompts.hashBody(sendInit?.body);
        if (promptHash !== undefined && promptHeader !== undefined) sendInit = withHeader(input, sendInit, promptHeader, promptHash);
      } catch {
        metrics.instrumentationErrors.inc(['record']);
      }
    }

    const startedAtMs = Date.now();
    const t0 = performance.now();
    let response: Response;
    try {
      response = await (sendInit === undefined ? fetch(input) : fetch(input, sendInit));
    } catch (err) {
      const name = (err as { name?: unknown } | null)?.name;
      const aborted = name === 'AbortError' || name === 'TimeoutError';
      metrics.failures.inc([aborted ? 'aborted' : 'error']);
      try {
        const operation = operations.get(routeOf(urlOf(input)));
        const durationSeconds = (performance.now() - t0) / 1000;
        if (operation !== undefined)
          genAi.observe({
            operation,
            requestModel: requestFieldsOf(sendInit).model,
            responseModel: '',
            errorType: aborted ? 'aborted' : 'connection_error',
            durationSeconds,
            timeToFirstTokenSeconds: undefined,
            tokens: undefined,
          });
      } catch {
        metrics.instrumentationErrors.inc(['record']);
      }
      throw err;
    }
    const latencyMs = performance.now() - t0;

    let request: { model: string; stream: boolean } = { model: '', stream: false };
    let route = '';
    try {
      request = requestFieldsOf(sendInit);
      route = routeOf(urlOf(input));
    } catch {
      metrics.instrumentationErrors.inc(['record']);
    }
    const headers = response.headers;
    const status = response.status;
    // Written once the body is done (observed), or now (not observed): one line per call either way.
    const record = (body: BodyFacts | undefined): void => {
      let line: string | undefined;
      try {
        const errorType = body === undefined ? '' : bodyErrorType(status, body);
        line = recorder.line({ startedAtMs, latencyMs, status, model: request.model, route, cohort, optIn: verdict?.sent, responseHeaders: headers, body, promptHash }, errorType);
        const operation = operations.get(route);
        if (operation !== undefined && body !== undefined) {
          genAi.observe({
            operation,
            requestModel: request.model,
            responseModel: body.responseModel ?? '',
            errorType,
            durationSeconds: body.end === 'unfinished' ? undefined : body.durationMs / 1000,
            timeToFirstTokenSeconds: body.firstEventMs === undefined ? undefined : body.firstEventMs / 1000,
            tokens: body.tokens,
          });
        }
        if (request.stream && status === 400) noteStreamRefusal(verdict?.optIn.state === 'valid', body?.errorMessage);
      } catch {
        metrics.instrumentationErrors.inc(['record']);
      }
      if (line !== undefined) {
        try {
          sink.write(line);
        } catch {
          metrics.instrumentationErrors.inc(['deliver']);
        }
      }
    };
    // The in-process pipeline is loaded when first needed (lazy-in-process.ts): a call answered before
    // it is there waits for it, so once the call returns, its record is counted (or will be, as its body ends).
    if (loading !== undefined && !loading.settled) await loading.ready;
    if (observers === undefined) {
      record(undefined);
      return response;
    }
    try {
      return observers.observe(response, t0, record);
    } catch {
      // Could not wrap the body: the caller gets the response untouched, recorded at its headers.
      metrics.instrumentationErrors.inc(['record']);
      record(undefined);
      return response;
    }
  };

  const noteStreamRefusal = (optedIn: boolean, message: string | undefined): void => {
    const reason = streamRefusalReason(optedIn, message);
    metrics.streamRefusals.inc([reason]);
    if (reason === 'zero_plane_does_not_stream') {
      once(
        'stream-refused',
        'zero-plane client: a "stream": true call with the opt-in was refused (400): the Zero-Plane layer does not stream. Send "stream": false to be served by Zero-Plane. Counted in zero_plane_client_stream_refusals_total.',
      );
    }
  };

  const instrumented: InstrumentedFetch = Object.assign(call, {
    families: (): readonly Family[] => [...sink.families(), ...metrics.families(), ...genAi.families()],
    beforeScrape: (): void => sink.beforeScrape?.(),
    signals: (): WindowSignals | undefined => loading?.signals(),
    flush: (): Promise<void> => sink.flush(),
    close: async (): Promise<void> => {
      // Bodies still open are recorded with what is known, so their lines make the last batch.
      observers?.settle();
      await sink.close();
      detach();
    },
    records: () => ({
      delivered: metrics.records.get([destination, 'delivered']),
      dropped: metrics.records.get([destination, 'dropped']),
      rejected: metrics.records.get([destination, 'rejected']),
      pending: metrics.pending.get([destination]),
    }),
  });
  return instrumented;
}

/** A call's error.type: the body's error, else what ended the body early, else '' (success). */
function bodyErrorType(status: number, body: BodyFacts): string {
  const fromBody = errorTypeOf(status, body.errorType);
  if (fromBody !== '') return fromBody;
  return body.end === 'cancel' ? 'body_cancelled' : body.end === 'error' ? 'body_error' : '';
}

function createSink(to: ParsedDestination, config: ClientConfig, fetch: Fetch, metrics: ClientMetrics, warn: (key: string, message: string) => void, closeTimeoutMs: number): RecordSink {
  if (to === 'in-process') return new LazyInProcess(config, metrics, warn);
  if ('logFile' in to) return new LogFileSink({ path: to.logFile, maxPendingRecords: to.maxPendingRecords, closeTimeoutMs }, metrics, warn);
  const i = to.ingest;
  return new IngestSink(
    {
      url: i.url,
      bearerToken: i.bearerToken,
      headers: i.headers,
      batchRecords: i.batchRecords,
      flushIntervalMs: i.flushInterval,
      maxPendingRecords: i.maxPendingRecords,
      maxAttempts: i.maxAttempts,
      timeoutMs: i.timeout,
      closeTimeoutMs,
    },
    fetch,
    metrics,
    warn,
  );
}
