// Reads the firing pause alerts from Alertmanager's API v2 for the gate, every gate.pollInterval and at once
// when a push asks. The URLs are tried in order and the first that answers wins: peers of one HA cluster
// each hold every alert (Prometheus sends each alert to all of them), so any one that answers is the truth.
// A read that fails at every URL leaves the gate's state as it was, marked stale once it is old.
import { z } from 'zod';
import type { Logger } from '../server/logger.js';
import { endsAtOf, sourceLabel, type LoadSheddingGate, type SeenAlert } from './load-shedding-gate.js';

export interface AlertmanagerPollerOptions {
  urls: readonly string[];
  intervalMs: number;
  timeoutMs: number;
  /** Largest body read from one Alertmanager (gate.maxBodyBytes serves here too). */
  maxBodyBytes: number;
  log: Logger;
  fetch?: typeof globalThis.fetch;
}

/** Alertmanager's gettableAlert: only what the gate uses is required; the rest is ignored. */
const gettableAlert = z.looseObject({
  fingerprint: z.string().min(1).max(128),
  labels: z.record(z.string(), z.string()),
  startsAt: z.string(),
  endsAt: z.string().optional().catch(undefined),
});
const gettableAlerts = z.array(gettableAlert);

/** Rounds tried before serve listens, so a restarted replica answers from Alertmanager's state at once. */
const START_ROUNDS = 3;

export class AlertmanagerPoller {
  private readonly fetch: typeof globalThis.fetch;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private readonly failing = new Set<string>();
  private answered = false;

  constructor(
    private readonly gate: LoadSheddingGate,
    private readonly o: AlertmanagerPollerOptions,
  ) {
    this.fetch = o.fetch ?? globalThis.fetch;
  }

  /** The API query every read sends: active, not silenced, not inhibited, matching the pause label and scope. */
  queryUrl(base: string): string {
    const u = new URL(base);
    u.pathname = `${u.pathname.replace(/\/+$/, '')}/api/v2/alerts`;
    const q = new URLSearchParams({ active: 'true', silenced: 'false', inhibited: 'false' });
    for (const m of this.gate.matchers()) q.append('filter', m);
    u.search = q.toString();
    return u.href;
  }

  /**
   * Reads now and then every interval; resolves once a read is answered, or after START_ROUNDS rounds
   * without one (a fresh process's first request is slow: its HTTP client loads inside the timeout).
   */
  async start(): Promise<void> {
    for (let i = 0; i < START_ROUNDS && !this.stopped; i++) {
      await this.pollNow();
      if (this.answered) break;
    }
    this.schedule();
  }

  /**
   * A read as soon as possible: at once, or right after the one in flight (which may have begun before
   * what prompted this one). Calls while one waits fold into it, so a flood of pushes costs two reads.
   */
  pollNow(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running !== undefined) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      try {
        do {
          this.again = false;
          await this.round();
        } while (this.again && !this.stopped);
      } finally {
        this.running = undefined;
      }
    })();
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.pollNow().finally(() => this.schedule());
    }, this.o.intervalMs);
    this.timer.unref();
  }

  private async round(): Promise<void> {
    const startedMs = this.gate.now();
    for (const url of this.o.urls) {
      try {
        const alerts = await this.read(url);
        this.gate.applyPoll(url, alerts, startedMs);
        this.answered = true;
        if (this.failing.delete(url)) this.o.log.info('gate source answers again', { source: sourceLabel(url) });
        return;
      } catch (err) {
        const message = (err as Error).message;
        this.gate.pollFailed(url, message);
        // Once per outage of each URL: a dead peer is tried (and skipped) every poll.
        if (!this.failing.has(url)) {
          this.failing.add(url);
          this.o.log.warn('gate source unreachable; trying the next', { source: sourceLabel(url), error: message });
        }
      }
    }
    this.gate.pollRoundFailed();
    this.o.log.debug('no gate source answered', { sources: this.o.urls.map(sourceLabel).join(',') });
  }

  private async read(url: string): Promise<SeenAlert[]> {
    const res = await this.fetch(this.queryUrl(url), { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(this.o.timeoutMs) });
    const text = await boundedText(res, this.o.maxBodyBytes);
    if (!res.ok) throw new Error(`HTTP ${res.status}: ${text.slice(0, 200)}`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new Error(`not JSON: ${text.slice(0, 200)}`);
    }
    const parsed = gettableAlerts.safeParse(body);
    if (!parsed.success) throw new Error(`not a list of Alertmanager alerts: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    return parsed.data.map((a) => ({ fingerprint: a.fingerprint, labels: a.labels, startsAt: a.startsAt, endsAtMs: endsAtOf(a.endsAt) }));
  }
}

/** The body as text, refusing past `max` bytes (an Alertmanager holding far more alerts than the gate would keep). */
async function boundedText(res: Response, max: number): Promise<string> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel();
    throw new Error(`answer of ${declared} bytes exceeds gate.maxBodyBytes (${max})`);
  }
  if (res.body === null) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > max) throw new Error(`answer exceeds gate.maxBodyBytes (${max} bytes)`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
