// What to say about a source whose first records carry no wanted response header field where its preset
// keeps them: the paths looked at, keys of those records that look like the headers under another name,
// and the config that would read them. Each fix is checked before it is said: its header source passes the
// config schema, and a reader built with it finds a header field in the records.
import type { Candidate } from './detect-preset.js';
import { flatHeaderField, headerSourceProblems, type HeaderSource, type RecordConfig, type Mapping, type PresetName } from './presets.js';
import { RecordParser } from './parse-record.js';

export interface HeadersHint {
  /** The preset the source is read with. */
  preset: PresetName;
  /** Records read, none of which carried a wanted response header field. */
  records: number;
  /** Where the preset looks for each wanted response header (a flat field, or `object.name` in any case). */
  paths: string[];
  /** Keys of the records that look like a wanted header under another name or prefix (dotted paths). */
  found: string[];
  /** Config that reads them, each checked on the records, best first: `input.preset: caddy-json`, `input.responseHeaders: { prefix: "sent_http_" }`. */
  fixes: string[];
  /** When nothing reads them: how to make the gateway log them. */
  advice: string | undefined;
}

/** Object levels looked into, and keys looked at per record: records are small, a pathological one is cut short. */
const MAX_DEPTH = 4;
const MAX_KEYS = 500;

/** How each gateway is made to log the response headers (docs/gateways.md), when no key of the records holds them. */
const ADVICE: Record<PresetName, string> = {
  default: 'log the response headers as an object under response_headers (docs/input.md#the-record)',
  'nginx-json': 'log $upstream_http_x_anthropic_layer_id and the other headers in the log_format (docs/gateways.md#nginx-nginx-json)',
  'envoy-json': 'log %RESP(X-ANTHROPIC-LAYER-ID)% and the other headers as resp_* fields (docs/gateways.md#envoy-envoy-json)',
  'caddy-json': 'Caddy logs the response headers it sends under resp_headers: the upstream sent none of these headers',
  'haproxy-json': 'capture the response headers and log them as capture_res_* fields (docs/gateways.md#haproxy-haproxy-json)',
  'kong-json': 'Kong logs the response headers under response.headers: the upstream sent none of these headers',
  'traefik-json': 'Traefik drops headers from its access log unless kept: keep X-Anthropic-Layer-Id and the others under accessLog.fields.headers.names (docs/gateways.md#traefik-traefik-json)',
  'apache-json': 'log %{X-Anthropic-Layer-Id}o and the other headers under headers_out in the LogFormat (docs/gateways.md#apache-httpd-apache-json)',
};

export function headersHint(
  config: RecordConfig,
  wanted: { responseHeaderNames: readonly string[]; requestHeaderNames: readonly string[] },
  preset: PresetName,
  candidates: readonly Candidate[],
  samples: readonly string[],
  records: number,
): HeadersHint {
  const names = [...new Set(wanted.responseHeaderNames.map((n) => n.toLowerCase()))];
  const current = (candidates.find((c) => c.preset === preset) as Candidate).mapping;
  const objects = samples.flatMap((line) => {
    try {
      const obj: unknown = JSON.parse(line);
      return obj !== null && typeof obj === 'object' && !Array.isArray(obj) ? [obj as Record<string, unknown>] : [];
    } catch {
      return [];
    }
  });

  const found = new Set<string>();
  const sources = new Map<string, HeaderSource>();
  for (const obj of objects) lookFor(names, obj, '', 0, found, sources, { keys: 0 });

  const scored: [string, number][] = [];
  // Another preset that finds them reads the rest of the gateway's fields right too: said first on a tie.
  for (const c of candidates) {
    if (c.preset === preset) continue;
    const n = objects.filter((o) => c.parser.parseValue(o).ok && c.parser.carriesResponseHeaders(o)).length;
    if (n > 0) scored.push([`input.preset: ${c.preset}`, n + 0.5]);
  }
  for (const source of sources.values()) {
    // Only a fix the config would take.
    if (headerSourceProblems(source).length > 0) continue;
    const parser = new RecordParser({
      mapping: { ...current, responseHeaders: source },
      latencyList: config.input.latencyList,
      absentValues: config.input.absentValues,
      maxLatencySeconds: config.input.maxLatency / 1000,
      responseHeaderNames: wanted.responseHeaderNames,
      requestHeaderNames: wanted.requestHeaderNames,
    });
    const n = objects.filter((o) => parser.carriesResponseHeaders(o)).length;
    if (n > 0) scored.push([`input.responseHeaders: ${flow(source)}`, n]);
  }
  const fixes = scored.sort((a, b) => b[1] - a[1]).map(([fix]) => fix);
  return {
    preset,
    records,
    paths: names.map((n) => headerPath(current, n)),
    found: [...found].slice(0, 10),
    fixes,
    advice: fixes.length === 0 ? ADVICE[preset] : undefined,
  };
}

/** Where `mapping` looks for header `name`. */
function headerPath(mapping: Mapping, name: string): string {
  const where = mapping.responseHeaders;
  return where.path === undefined ? flatHeaderField(where, name) : `${where.path}.${name}`;
}

/**
 * Walks one record for keys that are a wanted header's name (`x-anthropic-layer-id` in an object at `at`:
 * a header object) or end with it (`sent_http_x_anthropic_layer_id`, `downstream_X-Anthropic-Layer-Id`:
 * flat fields with a prefix), and adds the header source that would read each.
 */
function lookFor(names: readonly string[], obj: Record<string, unknown>, at: string, depth: number, found: Set<string>, sources: Map<string, HeaderSource>, budget: { keys: number }): void {
  for (const key in obj) {
    if (++budget.keys > MAX_KEYS) return;
    const full = at === '' ? key : `${at}.${key}`;
    const lower = key.toLowerCase();
    for (const name of names) {
      const underscored = name.replaceAll('-', '_');
      if (at !== '' && lower === name) {
        found.add(full);
        add(sources, { path: at });
      } else if (lower.endsWith(underscored) || lower.endsWith(name)) {
        found.add(full);
        // A prefix names top-level fields only.
        if (at !== '') continue;
        const prefix = key.slice(0, key.length - name.length);
        add(sources, { prefix });
        add(sources, { prefix, nameStyle: 'canonical' });
      }
    }
    const v = obj[key];
    if (depth < MAX_DEPTH && v !== null && typeof v === 'object' && !Array.isArray(v)) lookFor(names, v as Record<string, unknown>, full, depth + 1, found, sources, budget);
  }
}

function add(sources: Map<string, HeaderSource>, source: HeaderSource): void {
  sources.set(JSON.stringify(source), source);
}

/** A header source as a YAML flow mapping: `{ prefix: "sent_http_", nameStyle: canonical }`. */
function flow(source: HeaderSource): string {
  const parts = Object.entries(source).map(([k, v]) => `${k}: ${typeof v === 'string' && k !== 'nameStyle' ? JSON.stringify(v) : String(v)}`);
  return `{ ${parts.join(', ')} }`;
}
