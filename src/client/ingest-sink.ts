// Sends each call's line to a running exporter's POST /api/v1/ingest, in batches: when `batchRecords`
// lines are waiting, or `flushInterval` after the first of them. One batch is in flight at a time; a batch
// the exporter could take later (429, 5xx, no connection) is retried with backoff, one it refuses (400,
// 401, 404, 413, 415) is dropped. Everything lost is counted, and warned about once.
import type { ClientMetrics } from './client-metrics.js';
import type { Family } from './exposition.js';
import type { Fetch } from './fetch-args.js';
import type { RecordSink } from './record-sink.js';

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
  private queue: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  private sending: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly opts: IngestSinkOptions,
    private readonly fetch: Fetch,
    private readonly metrics: ClientMetrics,
    private readonly warn: (key: string, message: string) => void,
    /** Waits between retries; tests make it instant. */
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref()),
  ) {
    this.url = ingestUrl(opts.url);
    this.headers = {
      ...opts.headers,
      'content-type': 'application/x-ndjson',
      ...(opts.bearerToken === undefined ? {} : { authorization: `Bearer ${opts.bearerToken}` }),
    };
  }

  write(line: string): void {
    if (this.queue.length >= this.opts.maxPendingRecords) {
      this.count('dropped', 1);
      this.warn('full', `zero-plane client: ${this.url} does not keep up; dropping records past ${this.opts.maxPendingRecords} pending`);
      return;
    }
    this.queue.push(line);
    this.setPending();
    if (this.queue.length >= this.opts.batchRecords) this.kick();
    else if (this.timer === undefined && !this.closed) this.timer = setTimeout(() => this.kick(), this.opts.flushIntervalMs).unref();
  }

  /** Starts sending what is queued, unless a send is already running (it takes the queue as it goes). */
  private kick(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.sending ??= this.sendAll().finally(() => (this.sending = undefined));
  }

  private async sendAll(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.opts.batchRecords);
      await this.send(batch);
      this.setPending();
    }
  }

  private async send(batch: string[]): Promise<void> {
    const body = `${batch.join('\n')}\n`;
    for (let attempt = 1; ; attempt++) {
      let retryable: boolean;
      let problem: string;
      try {
        const res = await this.fetch(this.url, { method: 'POST', headers: this.headers, body, signal: AbortSignal.timeout(this.opts.timeoutMs) });
        const text = await res.text();
        if (res.ok) {
          // Taken: never sent again, even when the answer cannot be read (that would count the lines twice).
          const answer = readAnswer(text);
          this.count('delivered', answer?.accepted ?? batch.length);
          this.count('rejected', answer?.rejected ?? 0);
          return;
        }
        retryable = res.status === 429 || res.status >= 500;
        problem = `HTTP ${res.status}: ${text.slice(0, 200)}`;
      } catch (err) {
        retryable = true;
        problem = (err as Error).message;
      }
      if (!retryable || attempt >= this.opts.maxAttempts) {
        this.count('dropped', batch.length);
        this.warn(
          `send:${retryable ? 'unreachable' : problem.slice(0, 8)}`,
          `zero-plane client: ${this.url} did not take ${batch.length} records (${problem}); dropped and counted in zero_plane_client_records_total`,
        );
        return;
      }
      await this.sleep(Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** (attempt - 1)));
    }
  }

  private count(result: 'delivered' | 'dropped' | 'rejected', n: number): void {
    if (n > 0) this.metrics.records.inc(['ingest', result], n);
  }

  private setPending(): void {
    this.metrics.pending.set(['ingest'], this.queue.length);
  }

  families(): readonly Family[] {
    return [];
  }

  async flush(): Promise<void> {
    if (this.queue.length > 0) this.kick();
    while (this.sending !== undefined) await this.sending;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
  }
}
