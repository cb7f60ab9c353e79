// Drives a Messages endpoint (the simulator, or anything compatible) at a fixed rate with a realistic mix,
// and writes one gateway log line per completed round trip, as the gateway in front of it would.
import { openSync, createWriteStream, type WriteStream } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { MESSAGES_PATH, reportedAnswerMs, SERVER_TIMING_HEADER } from '../simulate/protocol.js';
import { createRng } from '../simulate/random.js';
import { gatewayLogLine } from './log-line.js';
import { RequestPlanner, resolveMix, wireHeaderValue, type Mix, type PlannedRequest } from './mix.js';

export interface LoadGeneratorOptions {
  /** Base URL (requests go to BASE/v1/messages) or a full URL with its own path. */
  target: string;
  ratePerSecond: number;
  /** Gateway log to append to (created when missing). */
  logPath: string;
  seed?: number;
  mix?: Partial<Mix>;
  /** Requests in flight at most; a request due while all are busy is skipped and counted in `dropped`. Default max(16, rate). */
  maxConcurrency?: number;
  /** A request that takes longer is abandoned and counted as an error. Default 10 000 ms. */
  timeoutMs?: number;
  /** Called for each failed round trip (connection refused, reset, timeout) and log write failure. */
  onError?: (err: Error) => void;
  /**
   * Logs the answer time the response reports (`server-timing: answer;dur=…`, the simulator's
   * reportAnswerTime) instead of the round trip, when it reports one: the demo's gateway, showing the
   * simulated layer rather than the host's scheduling delays. Off by default: `load` logs round trips as
   * measured.
   */
  logReportedAnswerTime?: boolean;
}

export interface LoadStats {
  /** Requests started. */
  sent: number;
  /** Round trips that got a whole response (any status); each wrote one log line. */
  completed: number;
  /** Round trips that failed without a response. */
  errors: number;
  /** Completed round trips by HTTP status. */
  byStatus: Record<string, number>;
  /** Requests skipped because `maxConcurrency` were in flight. */
  dropped: number;
}

/** How often the scheduler starts the requests that have come due. */
const TICK_MS = 10;

export class LoadGenerator {
  readonly stats: LoadStats = { sent: 0, completed: 0, errors: 0, byStatus: {}, dropped: 0 };
  private readonly url: URL;
  private readonly route: string;
  private readonly planner: RequestPlanner;
  private readonly secure: boolean;
  private agent: http.Agent | undefined;
  private readonly request: typeof http.request;
  private readonly maxConcurrency: number;
  private readonly timeoutMs: number;
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private log: WriteStream | undefined;
  private startedAt = 0;
  private due = 0;

  constructor(private readonly opts: LoadGeneratorOptions) {
    if (!(opts.ratePerSecond > 0) || !Number.isFinite(opts.ratePerSecond)) throw new Error(`ratePerSecond must be a positive number, got ${opts.ratePerSecond}`);
    let url: URL;
    try {
      url = new URL(opts.target);
    } catch {
      throw new Error(`target is not a URL: ${opts.target}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`target must be http:// or https://, got ${opts.target}`);
    if (url.pathname === '/' || url.pathname === '') url.pathname = MESSAGES_PATH;
    this.url = url;
    this.route = url.pathname;
    this.planner = new RequestPlanner(resolveMix(opts.mix), createRng(opts.seed));
    this.maxConcurrency = opts.maxConcurrency ?? Math.max(16, Math.ceil(opts.ratePerSecond));
    if (!Number.isInteger(this.maxConcurrency) || this.maxConcurrency < 1) throw new Error(`maxConcurrency must be a positive integer, got ${this.maxConcurrency}`);
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.secure = url.protocol === 'https:';
    this.request = this.secure ? https.request : http.request;
  }

  /** Starts sending. Throws when the log cannot be opened for appending. */
  start(): void {
    if (this.timer !== undefined) return;
    if (this.log === undefined) {
      const fd = openSync(this.opts.logPath, 'a');
      this.log = createWriteStream(this.opts.logPath, { fd });
      this.log.on('error', (err) => this.opts.onError?.(new Error(`cannot write ${this.opts.logPath}: ${err.message}`, { cause: err })));
    }
    this.agent ??= new (this.secure ? https.Agent : http.Agent)({ keepAlive: true, maxSockets: this.maxConcurrency });
    this.startedAt = performance.now();
    this.due = 0;
    this.timer = setInterval(() => this.tick(), TICK_MS);
    this.tick();
  }

  /** Stops sending, waits for the requests in flight, and closes the log. */
  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
    this.agent?.destroy();
    this.agent = undefined;
    const log = this.log;
    this.log = undefined;
    if (log !== undefined && !log.destroyed) await new Promise<void>((resolve) => log.end(() => resolve()));
  }

  private tick(): void {
    const agent = this.agent;
    if (agent === undefined) return;
    const target = Math.floor(((performance.now() - this.startedAt) / 1000) * this.opts.ratePerSecond);
    // After a stall, catch up by at most one second's worth rather than bursting the whole backlog.
    const behind = Math.min(target - this.due, Math.ceil(this.opts.ratePerSecond));
    this.due = target;
    for (let i = 0; i < behind; i++) {
      if (this.inFlight.size >= this.maxConcurrency) {
        this.stats.dropped += behind - i;
        return;
      }
      const p = this.roundTrip(this.planner.next(), agent);
      this.inFlight.add(p);
      void p.finally(() => this.inFlight.delete(p));
    }
  }

  private roundTrip(plan: PlannedRequest, agent: http.Agent): Promise<void> {
    this.stats.sent++;
    const startedAtMs = Date.now();
    const t0 = performance.now();
    const body = Buffer.from(plan.body, 'utf8');
    const headers: Record<string, string | number> = { 'content-length': body.length };
    for (const [name, value] of Object.entries(plan.headers)) headers[name] = wireHeaderValue(value);
    return new Promise<void>((resolve) => {
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        this.stats.errors++;
        this.opts.onError?.(err);
        resolve();
      };
      const req = this.request(this.url, { method: 'POST', agent, headers, timeout: this.timeoutMs }, (res) => {
        res.on('error', fail);
        res.on('close', () => {
          if (!res.complete) fail(new Error(`response from ${this.url.href} closed before the response was complete`));
        });
        res.resume();
        res.on('end', () => {
          if (settled) return;
          settled = true;
          const measuredMs = performance.now() - t0;
          const latencyMs = (this.opts.logReportedAnswerTime ? reportedAnswerMs(res.headers[SERVER_TIMING_HEADER]) : undefined) ?? measuredMs;
          const status = res.statusCode ?? 0;
          this.stats.completed++;
          this.stats.byStatus[status] = (this.stats.byStatus[status] ?? 0) + 1;
          const line = gatewayLogLine({
            startedAtMs,
            latencyMs,
            status,
            model: plan.model,
            route: this.route,
            cohort: plan.cohort,
            responseHeaders: res.headers,
            optIn: plan.optIn,
          });
          this.log?.write(`${line}\n`);
          resolve();
        });
      });
      req.on('timeout', () => req.destroy(new Error(`no response from ${this.url.href} within ${this.timeoutMs} ms`)));
      req.on('error', fail);
      req.end(body);
    });
  }
}
