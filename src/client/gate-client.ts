// gateClient({ url, pollInterval, failOpen }): the caller's side of the load-shedding gate. It polls the
// exporter's GET /api/v1/gate, keeps the last answer, and `await gate.allows('non-core')` says whether a
// non-core AI call may go out now: not while the P0 pauses them, and, when the exporter cannot be reached
// for longer than `staleAfter` (or says its own state is stale: no Alertmanager answers it), whatever the
// failure policy says. Core calls are always allowed.
import { CounterFamily, GaugeFamily } from '../metrics/families.js';
import { ANSWER_LIMIT_BYTES, cappedText } from './capped-body.js';
import type { Family, MetricsSource } from './exposition.js';
import type { Fetch } from './fetch-args.js';
import { defaultWarn, OptionReader } from './options.js';
import { warnOnce } from './record-sink.js';

export const GATE_PATH = '/api/v1/gate';

export interface GateClientOptions {
  /** The exporter's base URL (http://host:9185), or the full gate URL. */
  url: string;
  /** Default 5 s. */
  pollInterval?: number | string;
  /** Unreachable exporter: allow non-core calls (true, the default) or pause them (false). */
  failOpen?: boolean;
  /** How long the last answer is trusted while polls fail; default 3 × pollInterval. */
  staleAfter?: number | string;
  /** Per poll; default 2 s. */
  timeout?: number | string;
  /** Request headers, e.g. Authorization for an exporter with basic auth. */
  headers?: Record<string, string>;
  fetch?: Fetch;
  warn?: (message: string) => void;
}

function parseGateOptions(input: GateClientOptions) {
  const r = new OptionReader('gateClient');
  const o = r.object(input, '', ['url', 'pollInterval', 'failOpen', 'staleAfter', 'timeout', 'headers', 'fetch', 'warn']) ?? {};
  const parsed = {
    url: r.httpUrl(o.url, 'url'),
    pollInterval: r.duration(o.pollInterval, 'pollInterval', 5_000),
    failOpen: r.boolean(o.failOpen, 'failOpen', true),
    staleAfter: r.duration(o.staleAfter, 'staleAfter', undefined),
    timeout: r.duration(o.timeout, 'timeout', undefined),
    headers: r.stringRecord(o.headers, 'headers'),
    fetch: r.func<Fetch>(o.fetch, 'fetch', 'a fetch function'),
    warn: r.func<(message: string) => void>(o.warn, 'warn', 'a function (message: string) => void'),
  };
  r.done();
  // done() threw unless the required ones were read.
  return parsed as typeof parsed & { url: string; pollInterval: number; failOpen: boolean };
}

export type CallKind = 'core' | 'non-core';

/** Why allows() answered as it did. */
export type GateReason = 'core' | 'open' | 'paused' | 'fail_open' | 'fail_closed';

export interface GateClientState {
  /** The exporter's last answer; null before the first one. */
  pauseNonCore: boolean | null;
  /** When the current pause began, as the exporter says; null when not paused. */
  since: string | null;
  /** Whether the last poll got an answer. */
  reachable: boolean;
  /** Epoch ms of the last answer; null before the first one. */
  lastAnswerAt: number | null;
}

export interface GateClient extends MetricsSource {
  /** Whether a call of this kind may go out now. Never rejects. */
  allows(kind: CallKind): Promise<boolean>;
  /** allows() with the reason, for logs. */
  decide(kind: CallKind): Promise<{ allowed: boolean; reason: GateReason }>;
  state(): GateClientState;
  /** Stops polling. */
  close(): void;
}

/**
 * The gate's answer, or undefined when it is not one. `stale: true`: the exporter itself cannot say (no
 * Alertmanager answers it); its answer is no answer. Other fields are ignored (a newer exporter may add some).
 */
export function gateAnswer(json: unknown): { pauseNonCore: boolean; since: string | null; stale: boolean } | undefined {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return undefined;
  const { pauseNonCore, since, stale } = json as Record<string, unknown>;
  if (typeof pauseNonCore !== 'boolean') return undefined;
  if (since !== undefined && since !== null && typeof since !== 'string') return undefined;
  return { pauseNonCore, since: since ?? null, stale: stale === true };
}

export function gateUrl(base: string): string {
  const url = new URL(base);
  if (!url.pathname.endsWith(GATE_PATH)) url.pathname = `${url.pathname.replace(/\/+$/, '')}${GATE_PATH}`;
  return url.href;
}

export function gateClient(options: GateClientOptions): GateClient {
  const o = parseGateOptions(options);
  const url = gateUrl(o.url);
  const fetch: Fetch = o.fetch ?? globalThis.fetch;
  const pollMs = o.pollInterval;
  const staleMs = o.staleAfter ?? 3 * pollMs;
  const timeoutMs = o.timeout ?? 2_000;
  const once = warnOnce(o.warn ?? defaultWarn);

  const paused = new GaugeFamily('zero_plane_gate_client_paused', '1 while the exporter says non-core calls are paused (the P0), 0 when it says they may go; absent before its first answer.', []);
  const up = new GaugeFamily('zero_plane_gate_client_up', '1 when the last poll of the gate got an answer, else 0.', []);
  const lastAnswer = new GaugeFamily('zero_plane_gate_client_last_answer_timestamp_seconds', 'When the gate last answered.', []);
  const polls = new CounterFamily('zero_plane_gate_client_polls_total', 'Polls of the gate, by result (ok, error).', ['result']);
  const decisions = new CounterFamily('zero_plane_gate_client_decisions_total', 'allows() answers by call kind, decision (allowed, skipped) and reason (core, open, paused, fail_open, fail_closed).', [
    'kind',
    'decision',
    'reason',
  ]);
  up.set([], 0);
  for (const result of ['ok', 'error']) polls.touch([result]);
  decisions.touch(['non-core', 'skipped', 'paused']);
  decisions.touch(['non-core', 'allowed', 'open']);
  decisions.touch(['non-core', o.failOpen ? 'allowed' : 'skipped', o.failOpen ? 'fail_open' : 'fail_closed']);

  const state: GateClientState = { pauseNonCore: null, since: null, reachable: false, lastAnswerAt: null };
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const poll = async (): Promise<void> => {
    try {
      const res = await fetch(url, { headers: { accept: 'application/json', ...o.headers }, signal: AbortSignal.timeout(timeoutMs) });
      // Capped: an endpoint streaming a big body costs a poll error (the failure policy then decides), not memory.
      const text = await cappedText(res, ANSWER_LIMIT_BYTES);
      if (!res.ok) throw new Error(`HTTP ${res.status}: ${text.slice(0, 200)}`);
      const answer = gateAnswer(JSON.parse(text));
      if (answer === undefined) throw new Error(`not a gate answer: ${text.slice(0, 200)}`);
      // Counted as a failed poll: after staleAfter of them the failure policy decides, as for an unreachable exporter.
      if (answer.stale) throw new Error('the gate says its state is stale (no Alertmanager answers it)');
      const wasReachable = state.reachable;
      state.pauseNonCore = answer.pauseNonCore;
      state.since = answer.since;
      state.reachable = true;
      state.lastAnswerAt = Date.now();
      polls.inc(['ok']);
      up.set([], 1);
      paused.set([], state.pauseNonCore ? 1 : 0);
      lastAnswer.set([], state.lastAnswerAt / 1000);
      if (!wasReachable) once(`reachable:${state.lastAnswerAt}`, `zero-plane gate client: ${url} answers; non-core calls ${state.pauseNonCore ? 'are paused' : 'may go'}`);
    } catch (err) {
      const wasReachable = state.reachable || state.lastAnswerAt === null;
      state.reachable = false;
      polls.inc(['error']);
      up.set([], 0);
      // Once per outage: the first failed poll after an answer (or the very first poll).
      if (wasReachable)
        once(
          `unreachable:${state.lastAnswerAt ?? 0}`,
          `zero-plane gate client: cannot read ${url} (${(err as Error).message}); after ${staleMs} ms without an answer non-core calls are ${o.failOpen ? 'allowed (failOpen)' : 'paused (failOpen: false)'}`,
        );
    }
  };

  const loop = async (): Promise<void> => {
    await poll();
    if (!closed) timer = setTimeout(() => void loop(), pollMs).unref();
  };
  const first = loop();

  const decide = async (asked: CallKind): Promise<{ allowed: boolean; reason: GateReason }> => {
    // Anything not called core is gated: a misspelt kind must not slip past a P0 (and the label stays bounded).
    const kind: CallKind = asked === 'core' ? 'core' : 'non-core';
    let reason: GateReason;
    if (kind === 'core') reason = 'core';
    else {
      if (state.lastAnswerAt === null && !closed) await first;
      const fresh = state.lastAnswerAt !== null && Date.now() - state.lastAnswerAt <= staleMs;
      if (fresh) reason = state.pauseNonCore ? 'paused' : 'open';
      else reason = o.failOpen ? 'fail_open' : 'fail_closed';
    }
    const allowed = reason === 'core' || reason === 'open' || reason === 'fail_open';
    decisions.inc([kind, allowed ? 'allowed' : 'skipped', reason]);
    return { allowed, reason };
  };

  return {
    decide,
    allows: async (kind) => (await decide(kind)).allowed,
    state: () => ({ ...state }),
    families: (): readonly Family[] => [paused, up, lastAnswer, polls, decisions],
    close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
