// A probe result as the Prometheus text exposition `/probe` answers (blackbox_exporter's probe_* names plus
// the Zero-Plane series of metrics/probe-names.ts). The scrape adds job and instance (the target, by relabelling).
import * as n from '../metrics/probe-names.js';
import type { LimitedResult } from './probe-limiter.js';

export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

const escape = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const labels = (l: Record<string, string>) =>
  `{${Object.entries(l)
    .map(([k, v]) => `${k}="${escape(v)}"`)
    .join(',')}}`;

export function probeExposition({ result: r, reused, ageSeconds }: LimitedResult): string {
  const out: string[] = [];
  const gauge = (name: string, help: string, value: number, l?: Record<string, string>) => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name}${l === undefined ? '' : labels(l)} ${value}`);
  };
  const b = (x: boolean) => (x ? 1 : 0);
  gauge(n.PROBE_SUCCESS, 'Whether the probe was answered 2xx by the Zero-Plane layer (and not degraded, with failIfDegraded).', b(r.success));
  gauge(n.PROBE_DURATION, 'How long the probe request took, answer included, in seconds.', r.durationSeconds);
  // blackbox_exporter's 0 for "no answer": timeouts and refused connections have no status.
  gauge(n.PROBE_HTTP_STATUS, 'HTTP status of the answer; 0 when none came.', r.httpStatus ?? 0);
  gauge(n.PROBE_LAYER_HIT, 'Whether the answer came from the Zero-Plane layer (its layer-id header matched).', b(r.layerHit));
  gauge(n.PROBE_FALLBACK, 'Whether an answer came (any status) that was not from the Zero-Plane layer.', b(r.fallback));
  gauge(n.PROBE_DEGRADED, 'Whether the delay profile said degraded.', b(r.degraded));
  gauge(n.PROBE_DELAY_PROFILE, 'The parsed delay profile of the answer (warm-up outcome and throttle mode).', 1, { warmup: r.warmup ?? 'unknown', mode: r.mode ?? 'unknown' });
  if (r.downgradeReason !== null) gauge(n.PROBE_DOWNGRADE, 'The downgrade reason the answer gave.', 1, { reason: r.downgradeReason });
  gauge(n.PROBE_OPT_IN, 'How the opt-in header the probe sent classifies.', 1, { state: r.optIn.state, defect: r.optIn.defect ?? '' });
  gauge(n.PROBE_INFO, 'The module, model and SDK of the probe; sdk_outdated when older than probe.minimumSdkVersion.', 1, {
    module: r.module,
    model: r.model,
    sdk: r.sdk.name,
    sdk_version: r.sdk.version,
    sdk_outdated: String(r.sdk.outdated),
  });
  gauge(n.PROBE_REUSED, 'Whether this is the last result again (probe.minInterval or probe.maxRequestsPerHour held the request back).', b(reused));
  gauge(n.PROBE_RESULT_AGE, 'Age of the result in seconds (0 when fresh).', ageSeconds);
  return `${out.join('\n')}\n`;
}
