// The `probe` command's output: the result as JSON (one object), or as text a person reads in a CI log.
import type { LimitedResult } from './probe-limiter.js';

export function probeJson({ result, reused, ageSeconds }: LimitedResult): string {
  return `${JSON.stringify({ ...result, reused, ageSeconds })}\n`;
}

export function probeText({ result: r }: LimitedResult): string {
  const verdict = r.success
    ? 'success: served by Zero-Plane'
    : r.httpStatus === null
      ? `FAILED: no answer (${r.error ?? 'unknown error'})`
      : r.layerHit
        ? `FAILED: ${r.httpStatus < 200 || r.httpStatus >= 300 ? `HTTP ${r.httpStatus}` : 'degraded (failIfDegraded)'}`
        : `FAILED: not served by Zero-Plane (${r.layerId === null ? 'no layer-id header' : `layer ${r.layerId}`}${r.downgradeReason === null ? '' : `, downgrade reason ${r.downgradeReason}`})`;
  const rows: [string, string][] = [
    ['result', verdict],
    ['HTTP status', r.httpStatus === null ? 'none' : String(r.httpStatus)],
    ['layer', r.layerId === null ? 'none' : `${r.layerId}${r.layerHit ? ' (Zero-Plane)' : ''}`],
    ['duration', `${r.durationSeconds.toFixed(3)} s`],
    [
      'delay profile',
      r.delayProfile === null ? 'none' : `warmup=${r.warmup ?? 'unknown'} degraded=${r.degraded ? 'yes' : 'no'} mode=${r.mode ?? 'unknown'}${r.delayProfileInvalid ? ' (header does not parse)' : ''}`,
    ],
    ['downgrade', r.downgradeReason ?? 'none'],
    ['cached', r.cached ? 'yes' : 'no'],
    ['opt-in sent', `${r.optIn.state}${r.optIn.defect === null ? '' : ` (${r.optIn.defect})`}`],
    ['SDK', `${r.sdk.name} ${r.sdk.version}${r.sdk.outdated ? ` (older than ${r.sdk.minimum})` : ''}`],
  ];
  if (r.error !== null && r.httpStatus !== null) rows.push(['error', r.error]);
  const width = Math.max(...rows.map(([k]) => k.length)) + 2;
  const lines = [`probe ${r.module} -> ${r.target} (model ${r.model})`, ...rows.map(([k, v]) => `  ${`${k}:`.padEnd(width)}${v}`), ...r.warnings.map((w) => `warning: ${w}`)];
  return `${lines.join('\n')}\n`;
}
