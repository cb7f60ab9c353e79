// Reads the header contract (docs/contract.md §2) off one record: was it a Zero-Plane hit, degraded, warm, cached, …
import type { Config } from '../config/schema.js';
import type { GatewayRecord } from '../record/parse-record.js';
import { DelayProfileReader, type ThrottleMode, type WarmupOutcome } from './delay-profile.js';
import { responseHeaderNames } from './header-names.js';
import { classifyOptIn, type OptIn } from './opt-in.js';

export interface Signals {
  readonly hit: boolean;
  readonly degraded: boolean;
  /** Only set for hit requests: warm-up efficiency is the Zero-Plane layer's. */
  readonly warmup: WarmupOutcome;
  readonly mode: ThrottleMode;
  readonly cached: boolean;
  readonly downgradeReason: string | undefined;
  /** undefined when the log carries no request headers: "missing" would be a lie then. */
  readonly optIn: OptIn | undefined;
  /** The delay-profile header was present but is not a structured-field Dictionary. */
  readonly delayProfileInvalid: boolean;
}

export class SignalClassifier {
  private readonly h: Config['headers'];
  private readonly layerId: string;
  private readonly delayProfile: string;
  private readonly cached: string;
  private readonly downgrade: string;
  private readonly optIn: string;
  private readonly profiles: DelayProfileReader;
  // The layer id of the previous line and whether it matched: most lines repeat it, so the regex runs
  // only when the value changes.
  private lastLayer: string | undefined;
  private lastLayerHit = false;
  // The byte scan hands out the same frozen header objects while lines repeat a combination of values
  // (parse-record.ts, scannedHeaders): the signals of the previous line then hold for this one.
  private lastResponse: Readonly<Record<string, string>> | undefined;
  private lastRequest: Readonly<Record<string, string>> | undefined;
  private lastSignals: Signals | undefined;

  constructor(headers: Config['headers']) {
    this.h = headers;
    this.layerId = headers.layerId.name.toLowerCase();
    this.delayProfile = headers.delayProfile.name.toLowerCase();
    this.cached = headers.cached.name.toLowerCase();
    this.downgrade = headers.downgradeReason.name.toLowerCase();
    this.optIn = headers.optIn.name.toLowerCase();
    this.profiles = new DelayProfileReader(headers.delayProfile);
  }

  /** The response header names the record parser must extract. */
  get responseHeaderNames(): string[] {
    return responseHeaderNames(this.h);
  }

  get requestHeaderNames(): string[] {
    return [this.optIn];
  }

  private isHit(layer: string): boolean {
    if (layer !== this.lastLayer) {
      this.lastLayer = layer;
      this.lastLayerHit = this.h.layerId.match.test(layer);
    }
    return this.lastLayerHit;
  }

  classify(record: GatewayRecord): Signals {
    const res = record.responseHeaders;
    const req = record.requestHeaders;
    if (res === this.lastResponse && req === this.lastRequest && this.lastSignals !== undefined) return this.lastSignals;
    const signals = this.fromHeaders(res, req);
    // Only frozen objects: one that can change between lines could not be recognised by identity.
    const reusable = Object.isFrozen(res) && (req === undefined || Object.isFrozen(req));
    this.lastResponse = reusable ? res : undefined;
    this.lastRequest = reusable ? req : undefined;
    this.lastSignals = reusable ? signals : undefined;
    return signals;
  }

  private fromHeaders(res: Readonly<Record<string, string>>, req: Readonly<Record<string, string>> | undefined): Signals {
    const layer = res[this.layerId];
    const hit = layer !== undefined && this.isHit(layer);
    const profileText = res[this.delayProfile];
    const profile = profileText === undefined ? undefined : this.profiles.read(profileText);
    return {
      hit,
      degraded: profile?.degraded ?? false,
      warmup: hit ? profile?.warmup : undefined,
      mode: profile?.mode,
      cached: res[this.cached] === this.h.cached.value,
      downgradeReason: res[this.downgrade],
      optIn: req === undefined ? undefined : classifyOptIn(req[this.optIn], this.h.optIn.value),
      delayProfileInvalid: profile === null,
    };
  }
}
