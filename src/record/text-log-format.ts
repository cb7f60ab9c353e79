// Which gateway's default *text* access log a source's skipped lines look like. The first thing many users
// point the exporter at is the log their gateway already writes (nginx's `combined`, HAProxy's `httplog`,
// Envoy's default format): "invalid_json" alone does not tell them that the gateway needs a JSON format,
// nor which section of docs/gateways.md gives it.

export interface TextLogFormat {
  /** What the lines are, in words. */
  name: string;
  /** What to change, in words. */
  fix: string;
  /** Lines in an envelope (source/envelope.ts): the gateway's own line may well be JSON. */
  wrapped?: boolean;
}

const FORMATS: readonly (TextLogFormat & { line: RegExp })[] = [
  {
    // 127.0.0.1 - - [01/Dec/2026:10:00:00 +0000] "POST /v1/messages HTTP/1.1" 200 512 …
    line: /^\S+ \S+ \S+ \[\d{2}\/[A-Za-z]{3}\/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4}\] "[^"]*" \d{3} \S+/,
    name: 'the common/combined text format (the default of nginx and Apache, and Traefik\'s "common")',
    fix: 'have the gateway write JSON: docs/gateways.md#nginx-nginx-json gives the log_format (Apache: the LogFormat of docs/gateways.md#apache-httpd-apache-json; Traefik: accessLog.format: json)',
  },
  {
    // [2026-12-01T10:00:00.000Z] "POST /v1/messages HTTP/1.1" 200 - 0 512 183 …
    line: /^\[\d{4}-\d{2}-\d{2}T[^\]]+\] "[^"]*" \d{3} /,
    name: "Envoy's default text format",
    fix: 'give the access log a json_format: docs/gateways.md#envoy-envoy-json',
  },
  {
    // [haproxy[123]: ]127.0.0.1:5000 [01/Dec/2026:10:00:00.000] fe be/srv 0/0/0/183/183 200 512 …
    line: /^(?:.*haproxy\[\d+\]: )?\S+:\d+ \[\d{2}\/[A-Za-z]{3}\/\d{4}:\d{2}:\d{2}:\d{2}\.\d{3}\] \S+ \S+\/\S+ -?\d+\/-?\d+\/-?\d+\/-?\d+\/\+?-?\d+ \d{3} /,
    name: "HAProxy's text httplog format",
    fix: 'log a JSON log-format: docs/gateways.md#haproxy-haproxy-json',
  },
  // Wrapped lines reach here only with input.envelope set to something else than what wraps them.
  {
    line: /^\d{4}-\d{2}-\d{2}T\S+ (?:stdout|stderr) [PF]\S* /,
    name: 'Kubernetes CRI container log lines',
    fix: 'set input.envelope: cri (or auto, the default)',
    wrapped: true,
  },
  {
    line: /^\{"log":".*","stream":"(?:stdout|stderr)"/,
    name: 'Docker json-file log records',
    fix: 'set input.envelope: docker (or auto, the default)',
    wrapped: true,
  },
  {
    line: /^(?:<\d{1,3}>)?(?:\d \S+ |[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} )\S+ .*?\{/,
    name: 'syslog lines',
    fix: 'set input.envelope: syslog (or auto, the default)',
    wrapped: true,
  },
];

/** The text format most of the samples are in, if one; undefined for anything else (JSON, garbage, a mix). */
export function textLogFormat(samples: readonly string[]): TextLogFormat | undefined {
  if (samples.length === 0) return undefined;
  for (const f of FORMATS) {
    const matched = samples.filter((s) => f.line.test(s)).length;
    if (2 * matched > samples.length) return { name: f.name, fix: f.fix, ...(f.wrapped === true ? { wrapped: true } : {}) };
  }
  return undefined;
}
