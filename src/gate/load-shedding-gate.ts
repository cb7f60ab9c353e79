// The load-shedding gate: while an alert carrying pauseLabel=pauseValue (the P0) fires, non-core AI
// calls pause. Alertmanager tells us (webhook), the gateway asks us (GET /api/v1/gate).
// Bounded whatever is posted: at most maxAlerts alerts held (by fingerprint), each with a bounded label
// set, and the state lists only the first STATE_ALERTS of them (alertCount says how many there are).
// State lives in memory only: after a restart Alertmanager's repeat notifications (every firing alert of
// the group, each repeat_interval) teach it again; see the README.
import { gateSchema } from '../config/schema.js';
import { CounterFamily, GaugeFamily } from '../metrics/families.js';
import { cutToBytes } from '../metrics/label-limiter.js';
import type { WebhookPayload } from './webhook-payload.js';

export interface GateAlert {
  alertname: string;
  fingerprint: string;
  labels: Record<string, string>;
  startsAt: string;
}

export interface GateState {
  pauseNonCore: boolean;
  /** RFC 3339 time the current pause began (when the gate first saw a matching alert fire); null when not paused. */
  since: string | null;
  /** Firing pause alerts held (at most gate.maxAlerts). */
  alertCount: number;
  /** The first STATE_ALERTS of them, in the order they were first seen. */
  alerts: GateAlert[];
}

export interface LoadSheddingGateOptions {
  pauseLabel: string;
  pauseValue: string;
  /** Firing pause alerts held at once; unset = the config's default (serve passes gate.maxAlerts). */
  maxAlerts?: number;
  /** Milliseconds since the epoch; tests inject a fixed clock. */
  clock?: () => number;
}

/** Resolved fingerprints remembered to drop late duplicates of their firing notifications. */
const MAX_TOMBSTONES = 1024;
/** The config default of gate.maxAlerts, for a gate built without one. */
const DEFAULT_MAX_ALERTS = gateSchema.parse({}).maxAlerts;
/** Alerts listed in state(): what /api/v1/gate and the landing page show, however many are held. */
export const STATE_ALERTS = 20;
/**
 * What is kept of one alert's labels: the pack's alerts carry about six short ones. These bound only what
 * state() shows (at most ~5 KiB an alert); whether the gate pauses depends on the fingerprint and the
 * pause label alone.
 */
const MAX_ALERT_LABELS = 16;
const MAX_LABEL_NAME_BYTES = 64;
const MAX_LABEL_VALUE_BYTES = 256;

export class LoadSheddingGate {
  /** zero_plane_noncore_paused: 1 while paused, else 0; always present. */
  readonly paused: GaugeFamily;
  readonly dropped = new CounterFamily(
    'zero_plane_gate_alerts_dropped_total',
    'Firing pause alerts not held because the gate already held gate.maxAlerts of them (counted per notification).',
    [],
  );

  private readonly pauseLabel: string;
  private readonly pauseValue: string;
  private readonly maxAlerts: number;
  private readonly clock: () => number;
  /** Firing matching alerts by fingerprint, in the order they were first seen. */
  private readonly held = new Map<string, GateAlert>();
  /**
   * fingerprint → startsAt (ms) of the alert instance last seen resolved. With Alertmanager in HA every
   * peer notifies, so a peer's firing notification can arrive after another's resolved one; a firing
   * alert that started no later than the instance already resolved is that stale notification, not a
   * new incident (a re-fire is a new instance with a later startsAt).
   */
  private readonly resolved = new Map<string, number>();
  private sinceMs: number | null = null;

  constructor(opts: LoadSheddingGateOptions) {
    this.pauseLabel = opts.pauseLabel;
    this.pauseValue = opts.pauseValue;
    this.maxAlerts = opts.maxAlerts ?? DEFAULT_MAX_ALERTS;
    this.clock = opts.clock ?? Date.now;
    this.paused = new GaugeFamily(
      'zero_plane_noncore_paused',
      `1 while the load-shedding gate pauses non-core AI calls (an alert with ${opts.pauseLabel}="${opts.pauseValue}" is firing), else 0.`,
      [],
    );
    this.paused.set([], 0);
    this.dropped.touch([]);
  }

  /** Its metrics, for /metrics. */
  families() {
    return [this.paused, this.dropped];
  }

  /**
   * Applies one Alertmanager notification. Pause/unpause is decided once per payload, after all its alerts.
   * Its resolved alerts are applied first, so the room they free is there for its firing ones.
   */
  receive(payload: WebhookPayload): void {
    const wasPaused = this.held.size > 0;
    for (const alert of payload.alerts) {
      if (alert.status !== 'resolved') continue;
      // The fingerprint is the hash of the labels, so a resolved alert we hold always matched.
      this.held.delete(alert.fingerprint);
      if (this.matches(alert.labels)) this.remember(alert.fingerprint, Date.parse(alert.startsAt));
    }
    for (const alert of payload.alerts) {
      if (alert.status === 'resolved' || !this.matches(alert.labels)) continue;
      const startsAt = Date.parse(alert.startsAt);
      const resolvedStart = this.resolved.get(alert.fingerprint);
      if (resolvedStart !== undefined && startsAt <= resolvedStart) continue;
      if (this.held.has(alert.fingerprint)) continue; // a repeat: keeps its place and `since`
      if (this.held.size >= this.maxAlerts) {
        // Not held, but the gate is paused by the ones held; the notification that resolves one of those
        // lists this one again (a group's notification carries all its firing alerts), and then it fits.
        this.dropped.inc([]);
        continue;
      }
      const labels = boundedLabels(alert.labels);
      this.held.set(alert.fingerprint, { alertname: labels.alertname ?? '', fingerprint: alert.fingerprint, labels, startsAt: alert.startsAt });
    }
    const isPaused = this.held.size > 0;
    if (isPaused && !wasPaused) this.sinceMs = this.clock();
    if (!isPaused) this.sinceMs = null;
    this.paused.set([], isPaused ? 1 : 0);
  }

  get isPaused(): boolean {
    return this.held.size > 0;
  }

  state(): GateState {
    const alerts: GateAlert[] = [];
    for (const a of this.held.values()) {
      if (alerts.length === STATE_ALERTS) break;
      alerts.push({ ...a, labels: { ...a.labels } });
    }
    return {
      pauseNonCore: this.held.size > 0,
      since: this.sinceMs === null ? null : new Date(this.sinceMs).toISOString(),
      alertCount: this.held.size,
      alerts,
    };
  }

  private matches(labels: Record<string, string>): boolean {
    return labels[this.pauseLabel] === this.pauseValue;
  }

  private remember(fingerprint: string, startsAt: number): void {
    const previous = this.resolved.get(fingerprint) ?? -Infinity;
    this.resolved.delete(fingerprint); // re-insert so eviction drops the least recently resolved
    this.resolved.set(fingerprint, Math.max(previous, startsAt));
    if (this.resolved.size > MAX_TOMBSTONES) {
      const oldest = this.resolved.keys().next().value;
      if (oldest !== undefined) this.resolved.delete(oldest);
    }
  }
}

/** At most MAX_ALERT_LABELS labels (alertname first), names and values cut to their byte limits. */
function boundedLabels(labels: Record<string, string>): Record<string, string> {
  const names = Object.keys(labels);
  const kept = (names.includes('alertname') ? ['alertname', ...names.filter((n) => n !== 'alertname')] : names).slice(0, MAX_ALERT_LABELS);
  // fromEntries defines each key as data, so a label named __proto__ is a label like any other.
  return Object.fromEntries(kept.map((n) => [cutToBytes(n, MAX_LABEL_NAME_BYTES), cutToBytes(labels[n] as string, MAX_LABEL_VALUE_BYTES)]));
}
