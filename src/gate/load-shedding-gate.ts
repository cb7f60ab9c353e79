// The load-shedding gate: while an alert carrying pauseLabel=pauseValue (the P0) fires, non-core AI
// calls pause. Alertmanager tells us (webhook), the gateway asks us (GET /api/v1/gate).
import { GaugeFamily } from '../metrics/families.js';
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
  alerts: GateAlert[];
}

export interface LoadSheddingGateOptions {
  pauseLabel: string;
  pauseValue: string;
  /** Milliseconds since the epoch; tests inject a fixed clock. */
  clock?: () => number;
}

/** Resolved fingerprints remembered to drop late duplicates of their firing notifications. */
const MAX_TOMBSTONES = 1024;

export class LoadSheddingGate {
  /** zero_plane_noncore_paused: 1 while paused, else 0; always present. */
  readonly paused: GaugeFamily;

  private readonly pauseLabel: string;
  private readonly pauseValue: string;
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
    this.clock = opts.clock ?? Date.now;
    this.paused = new GaugeFamily(
      'zero_plane_noncore_paused',
      `1 while the load-shedding gate pauses non-core AI calls (an alert with ${opts.pauseLabel}="${opts.pauseValue}" is firing), else 0.`,
      [],
    );
    this.paused.set([], 0);
  }

  /** Applies one Alertmanager notification. Pause/unpause is decided once per payload, after all its alerts. */
  receive(payload: WebhookPayload): void {
    const wasPaused = this.held.size > 0;
    for (const alert of payload.alerts) {
      if (alert.status === 'resolved') {
        // The fingerprint is the hash of the labels, so a resolved alert we hold always matched.
        this.held.delete(alert.fingerprint);
        if (this.matches(alert.labels)) this.remember(alert.fingerprint, Date.parse(alert.startsAt));
        continue;
      }
      if (!this.matches(alert.labels)) continue;
      const startsAt = Date.parse(alert.startsAt);
      const resolvedStart = this.resolved.get(alert.fingerprint);
      if (resolvedStart !== undefined && startsAt <= resolvedStart) continue;
      if (this.held.has(alert.fingerprint)) continue; // a repeat: keeps its place and `since`
      this.held.set(alert.fingerprint, {
        alertname: alert.labels.alertname ?? '',
        fingerprint: alert.fingerprint,
        labels: { ...alert.labels },
        startsAt: alert.startsAt,
      });
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
    return {
      pauseNonCore: this.held.size > 0,
      since: this.sinceMs === null ? null : new Date(this.sinceMs).toISOString(),
      alerts: [...this.held.values()].map((a) => ({ ...a, labels: { ...a.labels } })),
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
