// The load-shedding gate: while an alert carrying pauseLabel=pauseValue (the P0) fires, non-core AI
// calls pause. Two sources tell us: Alertmanager's API, read every gate.pollInterval (the state every
// replica agrees on, since each reads the same Alertmanagers), and its webhook (a push: applied at once, a
// fast path). A successful read supersedes what was pushed before it began, so a resolve that reached
// another replica ends this one's pause within one poll. Without Alertmanagers the gate is push-only.
// Every alert ends on its own too: once its endsAt has passed, or when it has not been seen for
// gate.alertTtl, so no pause outlives its incident for want of a notification.
// Bounded whatever is posted or read: at most maxAlerts alerts held (by fingerprint), each with a bounded
// label set, and the state lists only the first STATE_ALERTS of them (alertCount says how many there are).
import { gateSchema } from '../config/schema.js';
import { CounterFamily, GaugeFamily } from '../metrics/families.js';
import { cutToBytes } from '../metrics/label-limiter.js';
import type { Logger } from '../server/logger.js';
import type { WebhookPayload } from './webhook-payload.js';

export type AlertSource = 'api' | 'push';

export interface GateAlert {
  alertname: string;
  fingerprint: string;
  labels: Record<string, string>;
  startsAt: string;
  /** Where the gate last learnt it fires: Alertmanager's API (a poll) or a webhook push. */
  source: AlertSource;
  /** The Alertmanager it came from: the URL polled, or the push's externalURL (else the sender's address). */
  peer: string;
  /** RFC 3339: when a poll or push last said it fires. */
  lastSeen: string;
  /** RFC 3339: when it stops counting unless seen again (its endsAt, or lastSeen + the TTL / the next poll). */
  expiresAt: string;
  /** Why it counts, in words: the matchers it meets and what said it fires. */
  reason: string;
}

export interface GateSourceHealth {
  url: string;
  /** Whether the last attempt at this Alertmanager got an answer (false also when it was not tried). */
  up: boolean;
  lastAttemptAt: string | null;
  lastSuccessAt: string | null;
  /** The last failure's message; null after a success. */
  error: string | null;
}

export interface GateState {
  pauseNonCore: boolean;
  /** RFC 3339 time the current pause began (when the gate first saw a matching alert fire); null when not paused. */
  since: string | null;
  /** Firing pause alerts held (at most gate.maxAlerts). */
  alertCount: number;
  /** The first STATE_ALERTS of them, in the order they were first seen. */
  alerts: GateAlert[];
  /** `api`: gate.alertmanagers are read (pushes are a fast path); `push`: the webhook alone. */
  mode: 'api' | 'push';
  /**
   * True when the gate cannot say: it reads Alertmanagers and none has answered for longer than twice the
   * poll interval (or none has yet). Clients then follow their failOpen policy.
   */
  stale: boolean;
  /** Whether the last poll got an answer from one of the Alertmanagers (always true push-only). */
  sourcesReachable: boolean;
  /** RFC 3339: when the state was last confirmed (the last successful poll; push-only, the last push); null before. */
  confirmedAt: string | null;
  /** The labels an alert must carry to count here besides the pause label (gate.scope); {} = none. */
  scope: Record<string, string>;
  sources: {
    alertmanagers: GateSourceHealth[];
    push: { lastReceivedAt: string | null; from: string | null };
  };
}

/** One firing alert as a source reports it. */
export interface SeenAlert {
  fingerprint: string;
  labels: Record<string, string>;
  startsAt: string;
  /** Epoch ms; NaN when it has none (a firing webhook alert, whose end is not yet known). */
  endsAtMs: number;
}

export interface LoadSheddingGateOptions {
  pauseLabel: string;
  pauseValue: string;
  /** Firing pause alerts held at once; unset = the config's default (serve passes gate.maxAlerts). */
  maxAlerts?: number;
  /** Only alerts carrying every one of these labels count (gate.scope); unset or {} = all. */
  scope?: Record<string, string>;
  /** A pushed alert not refreshed for this long stops counting; unset = the config's default (gate.alertTtl). */
  alertTtlMs?: number;
  /** The Alertmanagers polled (gate.alertmanagers), for the state's health list; none = push-only. */
  alertmanagers?: readonly string[];
  /** gate.pollInterval: decides when the state is stale. */
  pollIntervalMs?: number;
  /** Pause and resume that no push caused (a poll, an expiry) are logged here. */
  log?: Logger;
  /** Milliseconds since the epoch; tests inject a fixed clock. */
  clock?: () => number;
}

/** Resolved fingerprints remembered to drop late duplicates of their firing notifications. */
const MAX_TOMBSTONES = 1024;
const DEFAULTS = gateSchema.parse({});
/** Alerts listed in state(): what /api/v1/gate and the landing page show, however many are held. */
export const STATE_ALERTS = 20;
/**
 * What is kept of one alert's labels: the pack's alerts carry about six short ones. These bound only what
 * state() shows (at most ~5 KiB an alert); whether the gate pauses depends on the fingerprint, the pause
 * label and the scope alone, checked on the labels as received.
 */
const MAX_ALERT_LABELS = 16;
const MAX_LABEL_NAME_BYTES = 64;
const MAX_LABEL_VALUE_BYTES = 256;

interface Sighting {
  peer: string;
  lastSeenMs: number;
  /** NaN: none. */
  endsAtMs: number;
}

interface Held {
  alertname: string;
  fingerprint: string;
  labels: Record<string, string>;
  startsAt: string;
  api?: Sighting;
  push?: Sighting;
}

interface Tombstone {
  /** startsAt (ms) of the instance resolved. */
  startsAt: number;
  /** When the resolve was received. */
  at: number;
}

interface SourceHealth {
  url: string;
  up: boolean;
  lastAttemptMs: number | null;
  lastSuccessMs: number | null;
  error: string | null;
}

export class LoadSheddingGate {
  /** zero_plane_noncore_paused: 1 while paused, else 0; always present. */
  readonly paused: GaugeFamily;
  readonly dropped = new CounterFamily(
    'zero_plane_gate_alerts_dropped_total',
    'Firing pause alerts not held because the gate already held gate.maxAlerts of them (counted per notification or poll).',
    [],
  );
  readonly alertsGauge = new GaugeFamily('zero_plane_gate_alerts', 'Firing pause alerts the gate counts, by where it last learnt of them (api: a poll of Alertmanager, push: the webhook).', [
    'source',
  ]);
  readonly stateAge = new GaugeFamily(
    'zero_plane_gate_state_age_seconds',
    'Seconds since the gate state was last confirmed: the last successful poll of an Alertmanager (push-only: the last push, else the start).',
    [],
  );
  readonly sourceErrors = new CounterFamily(
    'zero_plane_gate_source_errors_total',
    'Failed reads of a gate source: an Alertmanager URL of gate.alertmanagers (no answer, bad status or body), or push (a webhook rejected).',
    ['source'],
  );

  readonly mode: 'api' | 'push';
  private readonly pauseLabel: string;
  private readonly pauseValue: string;
  private readonly maxAlerts: number;
  private readonly scope: Record<string, string>;
  private readonly ttlMs: number;
  private readonly staleAfterMs: number;
  private readonly pollIntervalMs: number;
  private readonly log: Logger | undefined;
  private readonly clock: () => number;
  private readonly startedMs: number;
  /** Firing matching alerts by fingerprint, in the order they were first seen. */
  private readonly held = new Map<string, Held>();
  /**
   * fingerprint → the instance last seen resolved. With Alertmanager in HA every peer notifies, so a peer's
   * firing notification can arrive after another's resolved one; a firing alert that started no later
   * than the instance already resolved is that stale notification, not a new incident (a re-fire is a
   * new instance with a later startsAt). A poll that began before the resolve arrived is stale the same way.
   */
  private readonly resolved = new Map<string, Tombstone>();
  private readonly sources: SourceHealth[];
  private sinceMs: number | null = null;
  private lastPollSuccessMs: number | null = null;
  private lastPollOk = false;
  private lastPushMs: number | null = null;
  private lastPushFrom: string | null = null;

  constructor(opts: LoadSheddingGateOptions) {
    this.pauseLabel = opts.pauseLabel;
    this.pauseValue = opts.pauseValue;
    this.maxAlerts = opts.maxAlerts ?? DEFAULTS.maxAlerts;
    this.scope = { ...(opts.scope ?? {}) };
    this.ttlMs = opts.alertTtlMs ?? DEFAULTS.alertTtl;
    this.pollIntervalMs = opts.pollIntervalMs ?? DEFAULTS.pollInterval;
    this.staleAfterMs = 2 * this.pollIntervalMs;
    this.log = opts.log;
    this.clock = opts.clock ?? Date.now;
    this.startedMs = this.clock();
    this.sources = (opts.alertmanagers ?? []).map((url) => ({ url, up: false, lastAttemptMs: null, lastSuccessMs: null, error: null }));
    this.mode = this.sources.length > 0 ? 'api' : 'push';
    const scoped = Object.entries(this.scope)
      .map(([k, v]) => `, ${k}="${v}"`)
      .join('');
    this.paused = new GaugeFamily(
      'zero_plane_noncore_paused',
      `1 while the load-shedding gate pauses non-core AI calls (an alert with ${opts.pauseLabel}="${opts.pauseValue}"${scoped} is firing), else 0.`,
      [],
    );
    this.paused.set([], 0);
    this.dropped.touch([]);
    for (const s of ['api', 'push']) this.alertsGauge.set([s], 0);
    for (const s of this.sources) this.sourceErrors.touch([sourceLabel(s.url)]);
    this.sourceErrors.touch(['push']);
    this.stateAge.set([], 0);
  }

  /** Its metrics, for /metrics. */
  families() {
    return [this.paused, this.dropped, this.alertsGauge, this.stateAge, this.sourceErrors];
  }

  /** The gate's clock (epoch ms): what a poll's start is compared with. */
  now(): number {
    return this.clock();
  }

  /** The label matchers an alert must meet, as Alertmanager's API filter takes them. */
  matchers(): string[] {
    return [this.pauseLabel, ...Object.keys(this.scope)].map((k) => `${k}="${escapeMatcherValue(k === this.pauseLabel ? this.pauseValue : (this.scope[k] as string))}"`);
  }

  /**
   * Applies one Alertmanager notification. Pause/unpause is decided once per payload, after all its alerts.
   * Its resolved alerts are applied first, so the room they free is there for its firing ones.
   * `remote` names the sender when the payload has no externalURL.
   */
  receive(payload: WebhookPayload, remote?: string): void {
    const now = this.clock();
    const peer = payload.externalURL !== undefined && payload.externalURL !== '' ? payload.externalURL : (remote ?? 'unknown');
    this.lastPushMs = now;
    this.lastPushFrom = peer;
    for (const alert of payload.alerts) {
      if (alert.status !== 'resolved' || !this.matches(alert.labels)) continue;
      // A resolve ends every sighting, the API's too: the next poll says whether it fires still.
      this.held.delete(alert.fingerprint);
      this.remember(alert.fingerprint, Date.parse(alert.startsAt), now);
    }
    for (const alert of payload.alerts) {
      if (alert.status === 'resolved' || !this.matches(alert.labels)) continue;
      const endsAtMs = endsAtOf(alert.endsAt);
      if (endsAtMs <= now) continue; // ended already: a late or replayed notification
      const tomb = this.resolved.get(alert.fingerprint);
      if (tomb !== undefined && Date.parse(alert.startsAt) <= tomb.startsAt) continue;
      this.sight({ fingerprint: alert.fingerprint, labels: alert.labels, startsAt: alert.startsAt, endsAtMs }, 'push', { peer, lastSeenMs: now, endsAtMs });
    }
    this.settle(now, undefined);
  }

  /** A webhook body that was rejected: counted against the push source. */
  pushRejected(): void {
    this.sourceErrors.inc(['push']);
  }

  /**
   * One successful read of Alertmanager `peer`, begun at `startedMs`: the firing pause alerts it holds now.
   * It replaces what the last read said, and what was pushed before it began (the API has seen that too).
   */
  applyPoll(peer: string, alerts: readonly SeenAlert[], startedMs: number): void {
    const now = this.clock();
    for (const [fp, h] of this.held) {
      delete h.api;
      if (h.push !== undefined && h.push.lastSeenMs < startedMs) delete h.push;
      if (h.push === undefined) this.held.delete(fp);
    }
    for (const a of alerts) {
      if (!this.matches(a.labels)) continue;
      const tomb = this.resolved.get(a.fingerprint);
      // Resolved by a push that arrived after this read began: the read is older news.
      if (tomb !== undefined && tomb.at >= startedMs && Date.parse(a.startsAt) <= tomb.startsAt) continue;
      this.sight(a, 'api', { peer, lastSeenMs: now, endsAtMs: a.endsAtMs });
    }
    this.lastPollSuccessMs = now;
    this.lastPollOk = true;
    this.recordAttempt(peer, now, null);
    this.settle(now, 'poll');
  }

  /** An Alertmanager that did not answer (or answered nonsense); `error` says how. */
  pollFailed(peer: string, error: string): void {
    this.sourceErrors.inc([sourceLabel(peer)]);
    this.recordAttempt(peer, this.clock(), error);
  }

  /** A poll round in which no Alertmanager answered. */
  pollRoundFailed(): void {
    this.lastPollOk = false;
    this.settle(this.clock(), 'poll');
  }

  get isPaused(): boolean {
    this.settle(this.clock(), 'expiry');
    return this.held.size > 0;
  }

  /** Brings expiry and the gauges up to now (before a scrape). */
  refresh(): void {
    this.settle(this.clock(), 'expiry');
  }

  state(): GateState {
    const now = this.clock();
    this.settle(now, 'expiry');
    const alerts: GateAlert[] = [];
    for (const h of this.held.values()) {
      if (alerts.length === STATE_ALERTS) break;
      alerts.push(this.describe(h));
    }
    const confirmed = this.confirmedMs();
    return {
      pauseNonCore: this.held.size > 0,
      since: this.sinceMs === null ? null : new Date(this.sinceMs).toISOString(),
      alertCount: this.held.size,
      alerts,
      mode: this.mode,
      stale: this.isStale(now),
      sourcesReachable: this.mode === 'push' || this.lastPollOk,
      confirmedAt: confirmed === null ? null : new Date(confirmed).toISOString(),
      scope: { ...this.scope },
      sources: {
        alertmanagers: this.sources.map((s) => ({
          url: s.url,
          up: s.up,
          lastAttemptAt: iso(s.lastAttemptMs),
          lastSuccessAt: iso(s.lastSuccessMs),
          error: s.error,
        })),
        push: { lastReceivedAt: iso(this.lastPushMs), from: this.lastPushFrom },
      },
    };
  }

  private isStale(now: number): boolean {
    return this.mode === 'api' && (this.lastPollSuccessMs === null || now - this.lastPollSuccessMs > this.staleAfterMs);
  }

  private confirmedMs(): number | null {
    return this.mode === 'api' ? this.lastPollSuccessMs : this.lastPushMs;
  }

  private describe(h: Held): GateAlert {
    const s = (h.api ?? h.push) as Sighting;
    const source: AlertSource = h.api !== undefined ? 'api' : 'push';
    const expires = this.expiresAt(s);
    const matched = this.matchers().join(', ');
    const why =
      source === 'api'
        ? `active, not silenced or inhibited in Alertmanager ${s.peer} at the last poll`
        : `pushed firing by ${s.peer}; counts until resolved, past its endsAt, or ${Math.round(this.ttlMs / 1000)} s without a repeat`;
    return {
      alertname: h.alertname,
      fingerprint: h.fingerprint,
      labels: { ...h.labels },
      startsAt: h.startsAt,
      source,
      peer: s.peer,
      lastSeen: new Date(s.lastSeenMs).toISOString(),
      expiresAt: new Date(expires).toISOString(),
      reason: `${matched}: ${why}`,
    };
  }

  /** When a sighting stops counting: its endsAt, or lastSeen + TTL, whichever comes first. */
  private expiresAt(s: Sighting): number {
    const byTtl = s.lastSeenMs + this.ttlMs;
    return Number.isNaN(s.endsAtMs) ? byTtl : Math.min(byTtl, s.endsAtMs);
  }

  private sight(a: SeenAlert, source: AlertSource, s: Sighting): void {
    let h = this.held.get(a.fingerprint);
    if (h === undefined) {
      if (this.held.size >= this.maxAlerts) {
        // Not held, but the gate is paused by the ones held; the next poll or notification lists it again.
        this.dropped.inc([]);
        return;
      }
      const labels = boundedLabels(a.labels);
      h = { alertname: labels.alertname ?? '', fingerprint: a.fingerprint, labels, startsAt: a.startsAt };
      this.held.set(a.fingerprint, h);
    }
    h[source] = s; // a repeat keeps its place and `since`, and is seen again
  }

  /** Drops what has expired, then sets the gauges and `since`; logs a pause or resume not caused by a push. */
  private settle(now: number, cause: 'poll' | 'expiry' | undefined): void {
    const wasPaused = this.sinceMs !== null;
    for (const [fp, h] of this.held) {
      for (const source of ['api', 'push'] as const) {
        const s = h[source];
        if (s !== undefined && this.expiresAt(s) <= now) delete h[source];
      }
      if (h.api === undefined && h.push === undefined) this.held.delete(fp);
    }
    const isPaused = this.held.size > 0;
    if (isPaused && !wasPaused) this.sinceMs = now;
    if (!isPaused) this.sinceMs = null;
    this.paused.set([], isPaused ? 1 : 0);
    let api = 0;
    for (const h of this.held.values()) if (h.api !== undefined) api++;
    this.alertsGauge.set(['api'], api);
    this.alertsGauge.set(['push'], this.held.size - api);
    const confirmed = this.confirmedMs() ?? this.startedMs;
    this.stateAge.set([], Math.max(0, (now - confirmed) / 1000));
    if (cause === undefined || this.log === undefined || isPaused === wasPaused) return;
    if (isPaused) {
      const names = [...this.held.values()].slice(0, STATE_ALERTS);
      this.log.info('non-core calls paused', { cause, since: new Date(now).toISOString(), alerts: names.map((h) => h.alertname).join(','), fingerprints: names.map((h) => h.fingerprint).join(',') });
    } else {
      this.log.info('non-core calls resumed', { cause });
    }
  }

  private recordAttempt(peer: string, now: number, error: string | null): void {
    const s = this.sources.find((x) => x.url === peer);
    if (s === undefined) return;
    s.lastAttemptMs = now;
    s.up = error === null;
    s.error = error;
    if (error === null) s.lastSuccessMs = now;
  }

  private matches(labels: Record<string, string>): boolean {
    if (labels[this.pauseLabel] !== this.pauseValue) return false;
    for (const k in this.scope) if (labels[k] !== this.scope[k]) return false;
    return true;
  }

  private remember(fingerprint: string, startsAt: number, at: number): void {
    const previous = this.resolved.get(fingerprint)?.startsAt ?? -Infinity;
    this.resolved.delete(fingerprint); // re-insert so eviction drops the least recently resolved
    this.resolved.set(fingerprint, { startsAt: Math.max(previous, startsAt), at });
    if (this.resolved.size > MAX_TOMBSTONES) {
      const oldest = this.resolved.keys().next().value;
      if (oldest !== undefined) this.resolved.delete(oldest);
    }
  }
}

/** Epoch ms of an alert's endsAt; NaN when it has none (absent, unparsable, or Go's zero time of a firing alert). */
export function endsAtOf(text: string | undefined): number {
  if (text === undefined) return NaN;
  const ms = Date.parse(text);
  // Go's zero time (0001-01-01T00:00:00Z): Alertmanager hides a firing alert's end this way.
  return Number.isFinite(ms) && ms > 0 ? ms : NaN;
}

/** The URL as the metric label shows it: no user or password. */
export function sourceLabel(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.href.replace(/\/$/, '');
  } catch {
    return url;
  }
}

function escapeMatcherValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/** At most MAX_ALERT_LABELS labels (alertname first), names and values cut to their byte limits. */
function boundedLabels(labels: Record<string, string>): Record<string, string> {
  const names = Object.keys(labels);
  const kept = (names.includes('alertname') ? ['alertname', ...names.filter((n) => n !== 'alertname')] : names).slice(0, MAX_ALERT_LABELS);
  // fromEntries defines each key as data, so a label named __proto__ is a label like any other.
  return Object.fromEntries(kept.map((n) => [cutToBytes(n, MAX_LABEL_NAME_BYTES), cutToBytes(labels[n] as string, MAX_LABEL_VALUE_BYTES)]));
}
