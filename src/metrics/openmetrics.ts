// The OpenMetrics 1.0 text format of our families, beside the Prometheus text format (exposition.ts):
// what /metrics answers under `Accept: application/openmetrics-text`, and what `export` writes for
// `promtool tsdb create-blocks-from openmetrics`. The differences that matter: a counter's family is named
// without `_total` (its samples keep it), units are declared, `_created` says since when a counter or
// histogram has counted, `le` values are canonical numbers, no blank lines, and the body ends with `# EOF`.

export const OPENMETRICS_CONTENT_TYPE = 'application/openmetrics-text; version=1.0.0; charset=utf-8';

/** The last line of every OpenMetrics exposition. */
export const OPENMETRICS_EOF = '# EOF\n';

export type OpenMetricsType = 'counter' | 'gauge' | 'histogram' | 'unknown';

/** Name suffixes that are a unit (OpenMetrics: the unit must be the family name's suffix). */
const UNITS = ['seconds', 'bytes', 'ratio'] as const;

/** The family name OpenMetrics uses: a counter's without `_total`. */
export function openMetricsFamilyName(name: string, type: OpenMetricsType): string {
  return type === 'counter' && name.endsWith('_total') ? name.slice(0, -'_total'.length) : name;
}

/** The unit a family name ends in, if it is one of the base units we use. */
function unitOf(familyName: string): string | undefined {
  return UNITS.find((u) => familyName.endsWith(`_${u}`));
}

/** `# TYPE`, `# UNIT` (when the name ends in one) and `# HELP` of a family, in that order, without a final newline. */
export function openMetricsHeader(familyName: string, help: string, type: OpenMetricsType): string {
  const unit = unitOf(familyName);
  return `# TYPE ${familyName} ${type}${unit === undefined ? '' : `\n# UNIT ${familyName} ${unit}`}\n# HELP ${familyName} ${escapeOpenMetrics(help)}`;
}

/** Escapes a HELP text or label value: backslash, newline and double quote. */
function escapeOpenMetrics(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

/** A sample value. Any float rendering is allowed outside `le` and `quantile`; NaN and the infinities are spelled out. */
export function openMetricsValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v < 0 ? '-Inf' : '+Inf';
  return `${v}`;
}

/**
 * A number in OpenMetrics' canonical form, for `le` and `quantile` values: Go's shortest `%g`
 * (strconv.FormatFloat(v, 'g', -1, 64)) with ".0" appended when it has neither a point nor an exponent,
 * so 10 is "10.0", 1e-5 is "1e-05" and 1e6 is "1e+06", as client_golang and client_python write them.
 */
export function canonicalNumber(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v < 0 ? '-Inf' : '+Inf';
  if (v === 0) return Object.is(v, -0) ? '-0.0' : '0.0';
  const [mantissa, expText] = v.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  // Go's shortest %g switches to an exponent below 1e-4 and from 1e6 (JavaScript: 1e-7 and 1e21).
  if (exp >= -4 && exp < 6) {
    const fixed = String(v);
    return fixed.includes('.') ? fixed : `${fixed}.0`;
  }
  const digits = String(Math.abs(exp)).padStart(2, '0');
  return `${mantissa}e${exp < 0 ? '-' : '+'}${digits}`;
}

/** A millisecond time as OpenMetrics seconds (a timestamp or a `_created` value). */
export function openMetricsSeconds(ms: number): string {
  return `${ms / 1000}`;
}
