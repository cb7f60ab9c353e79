// The series a `/probe` answer carries (probe/probe-exposition.ts writes them, the pack's probe rule and the
// dashboards' probe row read them): named here, below both, so the three cannot disagree.

/** blackbox_exporter's names, so a probe dashboard or alert written for it reads these too. */
export const PROBE_SUCCESS = 'probe_success';
export const PROBE_DURATION = 'probe_duration_seconds';
export const PROBE_HTTP_STATUS = 'probe_http_status_code';

/** 1 when the answer came from the Zero-Plane layer (headers.layerId matched). */
export const PROBE_LAYER_HIT = 'zero_plane_probe_layer_hit';
/** 1 when an answer came (any HTTP status) but not from the Zero-Plane layer: the silent fall-back. */
export const PROBE_FALLBACK = 'zero_plane_probe_fallback';
export const PROBE_DEGRADED = 'zero_plane_probe_degraded';
/** Labels warmup (hit, miss, unknown) and mode (strict, balanced, adaptive, unknown). */
export const PROBE_DELAY_PROFILE = 'zero_plane_probe_delay_profile';
/** Label reason: the downgrade-reason header, when the answer had one. */
export const PROBE_DOWNGRADE = 'zero_plane_probe_downgrade';
/** Labels state and defect: how the opt-in header that was sent classifies (a module may send a malformed one on purpose). */
export const PROBE_OPT_IN = 'zero_plane_probe_opt_in';
/** Labels module, model, sdk, sdk_version, sdk_outdated. */
export const PROBE_INFO = 'zero_plane_probe_info';
/** 1 when the answer is the last result again (probe.minInterval or probe.maxRequestsPerHour held the request back). */
export const PROBE_REUSED = 'zero_plane_probe_reused';
/** How old the result is, in seconds (0 for a fresh one). */
export const PROBE_RESULT_AGE = 'zero_plane_probe_result_age_seconds';
