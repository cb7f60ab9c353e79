// A local HTTP server that answers `POST /v1/messages` the way a Zero-Plane deployment does (see decide.ts
// for the rules), with runtime fault injection on `/admin/faults`, so integrations can be tested offline.
import { setMaxListeners } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleepFor } from 'node:timers/promises';
import express, { type NextFunction, type Request, type Response } from 'express';
import { decide, type Decision } from './decide.js';
import { FaultController, FaultValidationError, type Faults } from './faults.js';
import { resolveProfile, type ProfileOverrides, type SimulatorProfile } from './profile.js';
import { anthropicError, FAULTS_PATH, HEALTH_PATH, answerTiming, MESSAGES_PATH, OPT_IN_HEADER, SERVER_TIMING_HEADER, type AnthropicErrorType, type AnthropicMessage } from './protocol.js';
import { createRng, EvenDraws, randomDraws, type Rng } from './random.js';
import { RepeatTracker } from './repeat-tracker.js';
import { sseText, streamEvents, type StreamEvent } from './stream-response.js';

/** Waits `ms`; rejects when `signal` aborts (the simulator closing). Injected by tests that must not wait. */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

export interface SimulatorOptions extends ProfileOverrides {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: an ephemeral port (see `url`). */
  port?: number;
  /** Faults active from the start (default none). */
  faults?: Partial<Faults>;
  /** Told every change of the faults (through /admin/faults or `faults`). */
  onFaults?: (faults: Faults) => void;
  /** Seed of the random source (latency jitter, degraded/warm-up/fallback draws, ids). */
  seed?: number;
  /** A random source instead of the seeded one. */
  rng?: Rng;
  /**
   * How the degraded, warm-up and hitRateDrop yes/no draws fall: `random` (default, independent) or
   * `even` (spread exactly by their shares: 91.7 % warm-up hits is 917 in every 1000 answers).
   */
  draws?: 'random' | 'even';
  /**
   * Adds `server-timing: answer;dur=MS` to each answer: the time the simulated layer decided to take. The
   * answer still goes out after that long (or later, when the machine keeps this process off the CPU);
   * the demo's load generator logs the reported time, so what the demo shows is the simulated layer, not
   * the host's scheduling delays.
   */
  reportAnswerTime?: boolean;
  /** Replaces the real wait (setTimeout); the decided delay is still computed and reported. */
  sleep?: Sleep;
  /** Told every decision on POST /v1/messages, before its answer is sent: what a test compares a client's numbers with. */
  onAnswer?: (answer: SimulatorAnswer) => void;
}

export interface SimulatorAnswer {
  /** The opt-in header as received (header bytes read as Latin-1, as Node's HTTP server reads them). */
  optIn: string | undefined;
  decision: Decision;
  /**
   * A streamed answer, filled in as it is written (performance.now() of this process): when the headers,
   * the first event and the last byte left, and the exact bytes of the body.
   */
  stream?: StreamTimes;
}

export interface StreamTimes {
  headersAtMs?: number;
  firstEventAtMs?: number;
  endAtMs?: number;
  body: string;
}

export interface RunningSimulator {
  /** http://HOST:PORT, without a trailing slash. */
  url: string;
  faults: FaultController;
  profile: SimulatorProfile;
  close(): Promise<void>;
}

// libuv counts timers in whole milliseconds of a loop clock read when the iteration began, so a timer can
// fire up to 1 ms before performance.now() says it is due; an answer must never come before its decided delay.
const realSleep: Sleep = async (ms, signal) => {
  const due = performance.now() + ms;
  do await sleepFor(Math.max(0, due - performance.now()), undefined, { signal });
  while (performance.now() < due);
};

export async function startSimulator(opts: SimulatorOptions = {}): Promise<RunningSimulator> {
  const { host = '127.0.0.1', port = 0, faults: initialFaults, seed, rng: givenRng, sleep = realSleep, onAnswer, onFaults, draws: drawMode = 'random', reportAnswerTime = false, ...overrides } = opts;
  const profile = resolveProfile(overrides);
  const faults = new FaultController(initialFaults, onFaults);
  const rng = givenRng ?? createRng(seed);
  const draws = drawMode === 'even' ? new EvenDraws() : randomDraws(rng);
  const repeats = new RepeatTracker();
  const closing = new AbortController();
  // Every pending answer listens on this one signal while it waits; they are removed as each wait ends.
  setMaxListeners(0, closing.signal);

  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);

  // Any content type: the body is JSON by contract, and saying "not JSON" beats a silent empty body.
  const rawText = express.text({ type: () => true, limit: profile.bodyLimitBytes });

  app.post(MESSAGES_PATH, rawText, async (req: Request, res: Response) => {
    const started = performance.now();
    const body = typeof req.body === 'string' ? req.body : '';
    const header = req.headers[OPT_IN_HEADER];
    const optIn = Array.isArray(header) ? header.join(', ') : header;
    const decision = decide({ body, optIn, repeat: repeats.see(body) }, { profile, faults: faults.get(), rng, draws });
    const answer: SimulatorAnswer = decision.stream ? { optIn, decision, stream: { body: '' } } : { optIn, decision };
    onAnswer?.(answer);
    // Every answer goes through the sleep, for 0 ms when handling took longer than the decided delay: a
    // test that holds answers in an injected sleep then holds all of them, however busy the machine is.
    const remaining = Math.max(0, decision.delayMs - (performance.now() - started));
    try {
      await sleep(remaining, closing.signal);
    } catch {
      if (closing.signal.aborted) return; // shutting down: the connection is being dropped
      throw new Error('simulator sleep failed');
    }
    if (res.destroyed) return;
    if (reportAnswerTime) res.set(SERVER_TIMING_HEADER, answerTiming(decision.delayMs));
    if (answer.stream !== undefined) {
      await writeStream(res, decision, answer.stream);
      return;
    }
    res.status(decision.status).set(decision.headers).json(decision.body);
  });

  /** A streamed answer: the headers now, the events after the stream profile's delays. */
  const writeStream = async (res: Response, decision: Decision, times: StreamTimes): Promise<void> => {
    res.status(decision.status).set(decision.headers).set({ 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    res.flushHeaders();
    times.headersAtMs = performance.now();
    const events = streamEvents(decision.body as AnthropicMessage, profile.stream.deltas);
    const firstDelta = events.findIndex((e) => e.event === 'content_block_delta');
    for (let i = 0; i < events.length; i++) {
      // Everything up to the first text goes out together, after the first-event delay; each later delta after its gap.
      const wait = i === 0 ? profile.stream.firstEventDelayMs : i > firstDelta && events[i]?.event === 'content_block_delta' ? profile.stream.eventGapMs : 0;
      if (wait > 0) {
        try {
          await sleep(wait, closing.signal);
        } catch {
          return; // shutting down
        }
      }
      if (res.destroyed) return;
      const text = sseText(events[i] as StreamEvent);
      times.body += text;
      res.write(text);
      if (i === 0) times.firstEventAtMs = performance.now();
    }
    res.end();
    times.endAtMs = performance.now();
  };
  app.all(MESSAGES_PATH, (_req, res) => {
    res.set('Allow', 'POST');
    sendError(res, 405, 'invalid_request_error', `${MESSAGES_PATH} only accepts POST`);
  });

  app.get(FAULTS_PATH, (_req, res) => {
    res.json(faults.get());
  });
  const changeFaults = (apply: (input: unknown) => Faults) => (req: Request, res: Response) => {
    const text = typeof req.body === 'string' ? req.body : '';
    let input: unknown;
    try {
      input = JSON.parse(text);
    } catch (err) {
      sendError(res, 400, 'invalid_request_error', `body is not valid JSON: ${(err as Error).message}`);
      return;
    }
    try {
      res.json(apply(input));
    } catch (err) {
      if (!(err instanceof FaultValidationError)) throw err;
      sendError(res, 400, 'invalid_request_error', err.message);
    }
  };
  app.put(
    FAULTS_PATH,
    rawText,
    changeFaults((input) => faults.set(input)),
  );
  app.patch(
    FAULTS_PATH,
    rawText,
    changeFaults((input) => faults.update(input)),
  );
  app.delete(FAULTS_PATH, (_req, res) => {
    res.json(faults.reset());
  });
  app.all(FAULTS_PATH, (_req, res) => {
    res.set('Allow', 'GET, PUT, PATCH, DELETE');
    sendError(res, 405, 'invalid_request_error', `${FAULTS_PATH} accepts GET, PUT, PATCH and DELETE`);
  });

  app.get(HEALTH_PATH, (_req, res) => {
    res.type('text/plain').send('zero-plane simulator is Healthy.\n');
  });
  app.use((req, res) => {
    sendError(res, 404, 'not_found_error', `no route for ${req.method} ${req.path}`);
  });
  // Body-parser failures (too large, bad encoding) and anything unexpected, still Anthropic-shaped JSON.
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = httpStatusOf(err);
    if (status === 413) sendError(res, 413, 'request_too_large', `request body exceeds ${profile.bodyLimitBytes} bytes`);
    else if (status !== undefined && status >= 400 && status < 500) sendError(res, status, 'invalid_request_error', (err as Error).message);
    else sendError(res, 500, 'api_error', 'internal simulator error');
  });

  const server = await listen(app, host, port);
  const address = server.address() as AddressInfo;
  const hostForUrl = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closed: Promise<void> | undefined;
  return {
    url: `http://${hostForUrl}:${address.port}`,
    faults,
    profile,
    close() {
      closed ??= new Promise<void>((resolve, reject) => {
        closing.abort();
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

function listen(app: express.Express, host: string, port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host);
    server.once('error', reject);
    server.once('listening', () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}

function sendError(res: Response, status: number, type: AnthropicErrorType, message: string): void {
  if (res.headersSent || res.destroyed) return;
  res.status(status).json(anthropicError(type, message));
}

function httpStatusOf(err: unknown): number | undefined {
  if (err === null || typeof err !== 'object') return undefined;
  const s = (err as { status?: unknown; statusCode?: unknown }).status ?? (err as { statusCode?: unknown }).statusCode;
  return typeof s === 'number' ? s : undefined;
}
