// Sends each call's line to a running exporter's POST /api/v1/ingest, in batches: when `batchRecords`
// lines are waiting, or `flushInterval` after the first of them. One batch is in flight at a time; a batch
// the exporter could take later (429, 5xx, no connection) is retried with backoff, one it refuses (400,
// 401, 404, 413, 415) is dropped. flush() and close() give up after closeTimeout (a dead exporter must not
// hold the caller's exit), and the process's end flushes too (exit-hooks.ts). Everything lost is counted,
// and warned about once.
import { ANSWER_LIMIT_BYTES, cappedText } from './capped-body.js';
import type { ClientMetrics, RecordResult } from './client-metrics.js';
import type { Family } from './exposition.js';
import type { Fetch } from './fetch-args.js';
import { PendingRecords, settleWithin, type Flight, type RecordSink } from './record-sink.js';

export const INGEST_PATH = '/api/v1/ingest';

export interface IngestSinkOptions {
  /** The exporter's base URL (http://host:9185) or the full ingest URL. */
  url: string;
  /** Sent as `Authorization: Bearer …` (the exporter's ingest.bearerTokenFile). */
  bearerToken?: string | undefined;
  /** More request headers, e.g. basic auth for an exporter with basic_auth_users. */
  headers?: Record<string, string> | undefined;
  batchRecords: number;
  flushIntervalMs: number;
  maxPendingRecords: number;
  /** Tries per batch before it is dropped (the first send included). */
  maxAttempts: number;
  timeoutMs: number;
  /** How long flush() and close() wait before giving up on what is left (counted as dropped). */
  closeTimeoutMs: number;
}

/** What the exporter answers to an accepted body. */
interface IngestAnswer {
  accepted: number;
  rejected: number;
}

function readAnswer(text: string): IngestAnswer | undefined {
  try {
    const a = JSON.parse(text) as Partial<IngestAnswer> | null;
    return typeof a?.accepted === 'number' && typeof a.rejected === 'number' ? { accepted: a.accepted, rejected: a.rejected } : undefined;
  } catch {
    return undefined;
  }
}

const RETRY_BASE_MS = 250;
const RETRY_MAX_MS = 10_000;

export function ingestUrl(base: string): string {
  const url = new URL(base);
  if (!url.pathname.endsWith(INGEST_PATH)) url.pathname = `${url.pathname.replace(/\/+$/, '')}${INGEST_PATH}`;
  return url.href;
}

export class IngestSink implements RecordSink {
  private readonly url: string;
  private readonly headers: Record<string, string>;
  private readonly records: PendingRecords;
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> | undefined;
  private closed = false;
  /** Aborted when a bounded flush gives up: ends the request in flight and the back-off wait. */
  private giveUp = new AbortController();

  constructor(
    private readonly opts: IngestSinkOptions,
    private readonly fetch: Fetch,
    private readonly metrics: ClientMetrics,
    private readonly warn: (key: string, message: string) => void,
    /** Waits between retries (ends early when `signal` aborts); tests make it instant. */
    private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void> = abortableSleep,
  ) {
    this.records = new PendingRecords(
      (outcome, n) => metrics.records.inc(['ingest', outcome], n),
      (n) => metrics.pending.set(['ingest'], n),
    );
    this.url = ingestUrl(opts.url);
    this.headers = {
      ...opts.headers,
      'content-type': 'application/x-ndjson',
      ...(opts.bearerToken === undefined ? {} : { authorization: `Bearer ${opts.bearerToken}` }),
    };
  }

  write(line: string): void {
    if (this.closed) {
      this.count('dropped', 1);
      this.warn('closed', `zero-plane client: a call was recorded after close(); its record is dropped and counted in zero_plane_client_records_total`);
      return;
    }
    if (this.records.length >= this.opts.maxPendingRecords) {
      this.count('dropped', 1);
      this.warn('full', `zero-plane client: ${this.url} does not keep up; dropping records past ${this.opts.maxPendingRecords} pending`);
      return;
    }
    this.records.push(line);
    // The interval timer never keeps the process alive: at its end beforeExit sends what is left.
    if (this.records.length >= this.opts.batchRecords) this.kick();
    else if (this.timer === undefined) this.timer = setTimeout(() => this.kick(), this.opts.flushIntervalMs).unref();
  }

  /** Starts sending what is queued, unless a send is already running (it takes the queue as it goes). */
  private kick(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.sending !== undefined) return;
    const sending: Promise<void> = this.sendAll(this.giveUp.signal).finally(() => {
      if (this.sending === sending) this.sending = undefined;
    });
    this.sending = sending;
  }

  private async sendAll(signal: AbortSignal): Promise<void> {
    while (this.records.length > 0 && !signal.aborted) await this.send(this.records.take(this.opts.batchRecords), signal);
  }

  private async send(flight: Flight, giveUp: AbortSignal): Promise<void> {
    const batch = flight.batch;
    const settle = (result: RecordResult, n: number): void => this.records.outcome(flight, result, n);
    try {
      const body = `${batch.join('\n')}\n`;
      for (let attempt = 1; ; attempt++) {
        let retryable: boolean;
        let problem: string;
        const request = new AbortController();
        const abort = (): void => request.abort(giveUp.reason);
        giveUp.addEventListener('abort', abort, { once: true });
        // The timeout also bounds reading the answer: a body that stops arriving is ended by it.
        const timeout = setTimeout(() => request.abort(new DOMException(`no answer within ${this.opts.timeoutMs} ms`, 'TimeoutError')), this.opts.timeoutMs).unref();
        try {
          const res = await this.fetch(this.url, { method: 'POST', headers: this.headers, body, signal: request.signal });
          if (res.ok) {
            // Taken: never sent again, even when the answer cannot be read (that would count the lines twice).
            const answer = await cappedText(res, ANSWER_LIMIT_BYTES).then(readAnswer, () => undefined);
            settle('delivered', answer?.accepted ?? batch.length);
            settle('rejected', answer?.rejected ?? 0);
            return;
          }
          const text = await cappedText(res, ANSWER_LIMIT_BYTES).catch(() => '');
          retryable = res.status === 429 || res.status >= 500;
          problem = `HTTP ${res.status}: ${text.slice(0, 200)}`;
        } catch (err) {
          retryable = true;
          problem = (err as Error).message;
        } finally {
          clearTimeout(timeout);
          giveUp.removeEventListener('abort', abort);
        }
        if (giveUp.aborted) return; // counted by giveUpNow()
        if (!retryable || attempt >= this.opts.maxAttempts) {
          settle('dropped', batch.length);
          this.warn(
            `send:${retryable ? 'unreachable' : problem.slice(0, 8)}`,
            `zero-plane client: ${this.url} did not take ${batch.length} records (${problem}); dropped and counted in zero_plane_client_records_total`,
          );
          return;
        }
        await this.sleep(Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** (attempt - 1)), giveUp);
        if (giveUp.aborted) return;
      }
    } finally {
      // Every way out lands the flight once, here (given up on: giveUpNow() counted it already).
      this.records.landed(flight);
    }
  }

  /** Stops sending what is left (queued and in flight) and counts it as dropped; later records start afresh. */
  private giveUpNow(): void {
    const lost = this.records.giveUp();
    this.sending = undefined;
    this.giveUp.abort(new DOMException('given up', 'AbortError'));
    this.giveUp = new AbortController();
    this.warn('gave-up', `zero-plane client: ${this.url} did not take ${lost} records within closeTimeout (${this.opts.closeTimeoutMs} ms); dropped and counted in zero_plane_client_records_total`);
  }

  private count(result: RecordResult, n: number): void {
    if (n > 0) this.metrics.records.inc(['ingest', result], n);
  }

  families(): readonly Family[] {
    return [];
  }

  pending(): boolean {
    return this.records.length > 0 || this.sending !== undefined;
  }

  /** Sends what is waiting; after closeTimeout gives up on the rest (dropped, counted). */
  async flush(): Promise<void> {
    if (this.records.length > 0) this.kick();
    const kickQueued = (): void => {
      if (this.records.length > 0) this.kick();
    };
    if (!(await settleWithin(this.opts.closeTimeoutMs, () => this.sending, kickQueued))) this.giveUpNow();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    // unref'd: outside a flush nothing waits for it; inside one the flush's deadline keeps the process alive.
    const timer = setTimeout(done, ms).unref();
    signal.addEventListener('abort', done, { once: true });
  });
}
