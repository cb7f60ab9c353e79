// The shape matrix of `npm run bench`: the same stream of requests written the way each gateway writes
// it, so `report` is measured on real log shapes and not only on the default preset's own generator.
// Every line is seeded from its own index (as in generate-log.mjs), so a shape's file is the same bytes
// on every machine and a writer can start anywhere.
//
// Shapes (name → preset report should detect):
//   default     the default preset, bench/generate-log.mjs's lines (unchanged since the first bench)
//   reordered   the default preset with keys (and header members) in another order
//   nginx       nginx `log_format … escape=json` (README): `$time_iso8601` ends in `+00:00`, times in s
//   envoy       Envoy `json_format`, with the fields a real config logs around the preset's
//   wide        the default preset with ~3.7 KB of other fields: lines of ~4 KB
//   non-ascii   the default preset with Chinese text in kept fields (route, cohort, a header value) and
//               in skipped ones, logged in local time with an offset (`+08:00`)
//   garbage     the default preset with 20 % lines that are not records (text, truncated JSON, binary,
//               JSON that is not an object, objects without a latency)
//   caddy       Caddy's own access log (headers as arrays), as test/golden/real-caddy.ndjson
//   haproxy     the README's HAProxy `log-format`, as test/golden/real-haproxy.ndjson
//   kong        Kong's file-log object, as test/golden/preset-kong-json.ndjson (~1.9 KB lines)
//   traefik     Traefik's JSON access log, as test/golden/preset-traefik-json.ndjson
//
//   node bench/shapes.mjs SHAPE LINES OUT     writes one shape's file
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_START_MS, GENERATOR_VERSION, lineAt, rng, writeLines } from './generate-log.mjs';
export { lineBytes } from './generate-log.mjs';

/** Bumped whenever any shape's bytes change, so cached files under .tmp/bench-data are regenerated. */
export const SHAPES_VERSION = 2;

const MODELS = ['claude-sonnet-4', 'claude-haiku-4', 'claude-opus-4'];
const ROUTES = ['/v1/messages', '/v1/messages', '/v1/messages', '/v1/complete'];
const ROUTES_ZH = ['/v1/消息', '/v1/消息', '/v1/对话/补全', '/v1/complete'];
const COHORTS_ZH = ['稳定', '金丝雀'];
const DOWNGRADE = ['context_too_long', 'capacity'];
const DOWNGRADE_ZH = ['上下文过长', '容量不足'];
const AGENTS = ['anthropic-sdk-python/0.40.0', 'anthropic-sdk-typescript/0.32.1', 'curl/8.5.0', 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)'];

/**
 * The request behind line i, the same for every shape: the mix of generate-log.mjs (99.5 % hits, 0.3 %
 * degraded, warm-up misses, 5 % cached, downgrades, opt-in headers with 1 % invisible characters).
 */
export function requestAt(i, { startMs = DEFAULT_START_MS } = {}) {
  const rand = rng(0x5a9e ^ Math.imul(i + 1, 0x85ebca6b));
  const u = rand();
  const normal = Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const hit = u < 0.995;
  const degraded = hit && rand() < 0.003;
  const latencyMs = hit ? (degraded ? 240 : 150) * Math.exp(0.1 * normal) : 320 * Math.exp(0.25 * normal);
  const status = hit ? 200 : rand() < 0.8 ? 200 : rand() < 0.5 ? 429 : 503;
  const warmup = hit ? (rand() < 0.92 ? 'hit' : 'miss') : undefined;
  const downgrade = hit ? undefined : rand() < 0.7 ? 0 : 1;
  const cached = rand() < 0.05;
  const o = rand();
  const optIn = o < 0.97 ? 'valid' : o < 0.98 ? 'zwsp' : o < 0.99 ? 'nbsp' : 'none';
  const cohort = rand() < 0.1 ? 1 : 0;
  const id = (Math.floor(rand() * 2 ** 24) * 2 ** 24 + Math.floor(rand() * 2 ** 24)).toString(16).padStart(12, '0');
  const agent = AGENTS[Math.floor(rand() * AGENTS.length)];
  const bytes = 200 + Math.floor(rand() * 2000);
  const port = 30000 + Math.floor(rand() * 30000);
  return {
    i,
    ms: startMs + i,
    hit,
    degraded,
    latencyMs: Math.round(latencyMs * 1000) / 1000,
    status,
    model: MODELS[i % MODELS.length],
    route: i % ROUTES.length,
    cohort,
    layer: hit ? 'zero-plane-v1' : 'standard-v3',
    profile: hit ? `warmup=${warmup}, degraded=?${degraded ? 1 : 0}, mode=balanced` : undefined,
    downgrade,
    cached,
    optIn,
    id,
    agent,
    bytes,
    port,
    ip: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
  };
}

/** The opt-in header's value as JSON string content (`\u200b` written as an escape, U+00A0 raw), or undefined. */
function optInText(r, { escapes = true } = {}) {
  if (r.optIn === 'none') return undefined;
  if (r.optIn === 'valid') return 'zero-plane-2024';
  if (r.optIn === 'zwsp') return escapes ? 'zero-plane-2024\\u200b' : 'zero-plane-2024\u200b';
  return 'zero-plane-2024\u00a0';
}

const iso = (ms) => new Date(ms).toISOString();
/** nginx's `$time_iso8601`: seconds, with the offset written out. */
const isoOffset = (ms, offsetMinutes) => {
  const local = new Date(ms + offsetMinutes * 60_000).toISOString().slice(0, 19);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const a = Math.abs(offsetMinutes);
  return `${local}${sign}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
};
/** The same with milliseconds (a gateway logging local time at ms resolution). */
const isoOffsetMs = (ms, offsetMinutes) => {
  const s = isoOffset(ms, offsetMinutes);
  return `${s.slice(0, 19)}.${String(ms % 1000).padStart(3, '0')}${s.slice(19)}`;
};
/** Go's RFC3339Nano (Traefik): nanoseconds with trailing zeros cut. */
const rfc3339Nano = (ms, extraNs) => {
  const frac = `${String(ms % 1000).padStart(3, '0')}${String(extraNs).padStart(6, '0')}`.replace(/0+$/, '');
  return `${iso(ms).slice(0, 19)}${frac === '' ? '' : `.${frac}`}Z`;
};
const rid = (r) => `req_${r.id}`;

function defaultResponse(r, downgradeNames = DOWNGRADE) {
  let out = `"x-anthropic-layer-id":"${r.layer}"`;
  if (r.profile) out += `,"x-anthropic-delay-profile":"${r.profile}"`;
  if (r.downgrade !== undefined) out += `,"x-anthropic-downgrade-reason":"${downgradeNames[r.downgrade]}"`;
  if (r.cached) out += ',"x-anthropic-cached":"true"';
  return out;
}

function defaultRequest(r) {
  const v = optInText(r);
  return v === undefined ? '' : `"x-anthropic-experimental":"${v}"`;
}

function reordered(i) {
  const r = requestAt(i);
  let res = '';
  if (r.cached) res += '"x-anthropic-cached":"true",';
  if (r.profile) res += `"x-anthropic-delay-profile":"${r.profile}",`;
  if (r.downgrade !== undefined) res += `"x-anthropic-downgrade-reason":"${DOWNGRADE[r.downgrade]}",`;
  res += `"x-anthropic-layer-id":"${r.layer}"`;
  return (
    `{"request_headers":{${defaultRequest(r)}},"response_headers":{${res}},"cohort":"${r.cohort ? 'canary' : 'stable'}",` +
    `"route":"${ROUTES[r.route]}","model":"${r.model}","status":${r.status},"latency_ms":${r.latencyMs},"request_id":"${r.id}","ts":"${iso(r.ms)}"}`
  );
}

/** The README's nginx log_format with escape=json, plus the usual fields around it. */
function nginx(i) {
  const r = requestAt(i);
  const t = (r.latencyMs / 1000).toFixed(3);
  // Retries (0.5 %): nginx lists every attempt; the report reads the last.
  const upstream = i % 200 === 7 ? `0.050, ${t}` : t;
  // A user agent with a quote shows how escape=json writes one (\"): skipped, so still the fast path.
  const agent = i % 50 === 3 ? 'Mozilla/5.0 (compatible; \\"bot\\")' : r.agent;
  const opt = optInText(r, { escapes: false }) ?? '';
  return (
    `{"time_iso8601":"${isoOffset(r.ms, 0)}","remote_addr":"${r.ip}","request_method":"POST","request_time":"${t}","upstream_response_time":"${upstream}",` +
    `"status":"${r.status}","body_bytes_sent":"${r.bytes}","uri":"${ROUTES[r.route]}","http_user_agent":"${agent}","http_x_model":"${r.model}",` +
    `"http_x_cohort":"${r.cohort ? 'canary' : 'stable'}","upstream_http_x_anthropic_layer_id":"${r.layer}","upstream_http_x_anthropic_delay_profile":"${r.profile ?? ''}",` +
    `"upstream_http_x_anthropic_cached":"${r.cached ? 'true' : ''}","upstream_http_x_anthropic_downgrade_reason":"${r.downgrade === undefined ? '' : DOWNGRADE[r.downgrade]}",` +
    `"http_x_anthropic_experimental":"${opt}","request_id":"${r.id}"}`
  );
}

/** Envoy's json_format with the preset's keys and the usual command operators around them. */
function envoy(i) {
  const r = requestAt(i);
  const s = (v) => (v === undefined ? 'null' : `"${v}"`);
  return (
    `{"start_time":"${iso(r.ms)}","method":"POST","path":"${ROUTES[r.route]}","protocol":"HTTP/1.1","response_code":${r.status},"response_flags":"-",` +
    `"bytes_received":412,"bytes_sent":${r.bytes},"duration":${Math.round(r.latencyMs)},"upstream_service_time":"${Math.max(0, Math.round(r.latencyMs) - 1)}",` +
    `"x_forwarded_for":null,"user_agent":"${r.agent}","request_id":"${r.id}","authority":"llm.example","upstream_host":"10.0.0.7:8443",` +
    `"route_name":"${ROUTES[r.route] === '/v1/messages' ? 'messages' : 'complete'}","model":"${r.model}","cohort":"${r.cohort ? 'canary' : 'stable'}",` +
    `"resp_x_anthropic_layer_id":"${r.layer}","resp_x_anthropic_delay_profile":${s(r.profile)},"resp_x_anthropic_cached":${s(r.cached ? 'true' : undefined)},` +
    `"resp_x_anthropic_downgrade_reason":${s(r.downgrade === undefined ? undefined : DOWNGRADE[r.downgrade])},"req_x_anthropic_experimental":${s(optInText(r))}}`
  );
}

const LOREM = 'The quick brown fox jumps over the lazy dog while the gateway forwards the request upstream. ';

/** The default preset with ~3.7 KB of other fields: a request preview, tags, upstream timings, a trace. */
function wide(i) {
  const r = requestAt(i);
  const preview = LOREM.repeat(20).slice(0, 1600 + (i % 97));
  const tags = Array.from({ length: 24 }, (_, k) => `"tag-${(i + k) % 61}"`).join(',');
  const timings = Array.from({ length: 12 }, (_, k) => `{"phase":"p${k}","start_us":${k * 1000 + (i % 1000)},"dur_us":${(i * 7 + k * 13) % 997}}`).join(',');
  const trace = Array.from({ length: 8 }, (_, k) => `"span-${r.id}-${k}"`).join(',');
  return (
    `{"ts":"${iso(r.ms)}","request_id":"${r.id}","client":{"ip":"${r.ip}","port":${r.port},"agent":"${r.agent}"},"latency_ms":${r.latencyMs},"status":${r.status},` +
    `"model":"${r.model}","route":"${ROUTES[r.route]}","cohort":"${r.cohort ? 'canary' : 'stable'}","request_preview":"${preview}","tags":[${tags}],` +
    `"upstream":{"host":"10.0.0.7","port":8443,"timings":[${timings}]},"trace":[${trace}],` +
    `"response_headers":{"content-type":"application/json","server":"envoy",${defaultResponse(r)},"x-request-id":"${rid(r)}"},` +
    `"request_headers":{"content-type":"application/json","user-agent":"${r.agent}",${defaultRequest(r) || '"accept":"*/*"'}},"notes":"${LOREM.repeat(8)}"}`
  );
}

/** The default preset with Chinese text in the route, cohort, downgrade reason and a skipped field, in +08:00. */
function nonAscii(i) {
  const r = requestAt(i);
  const note = i % 3 === 0 ? '用户请求已转发到上游' : '请求完成';
  return (
    `{"ts":"${isoOffsetMs(r.ms, 480)}","request_id":"${r.id}","latency_ms":${r.latencyMs},"status":${r.status},"model":"${r.model}",` +
    `"route":"${ROUTES_ZH[r.route]}","cohort":"${COHORTS_ZH[r.cohort]}","note":"${note}",` +
    `"response_headers":{${defaultResponse(r, DOWNGRADE_ZH)}},"request_headers":{${defaultRequest(r)}}}`
  );
}

const GARBAGE_TEXT = [
  '2026/11/01 00:00:00 [error] 1234#1234: *5678 upstream timed out (110: Connection timed out) while reading response header from upstream',
  '10.0.0.1 - - [01/Nov/2026:00:00:00 +0000] "POST /v1/messages HTTP/1.1" 200 271 "-" "anthropic-sdk-python/0.40.0"',
  'Traceback (most recent call last):   File "/srv/app.py", line 42, in handler',
  '<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>',
  '    at processTicksAndRejections (node:internal/process/task_queues:95:5)',
];

/** One garbage line of several kinds, chosen by i: what a real log file collects besides records. */
function garbageLine(i, r) {
  const kind = (i * 2654435761) % 9;
  const record = `{"ts":"${iso(r.ms)}","request_id":"${r.id}","latency_ms":${r.latencyMs},"status":${r.status},"model":"${r.model}","route":"${ROUTES[r.route]}"}`;
  switch (kind) {
    case 0:
    case 1:
      return GARBAGE_TEXT[i % GARBAGE_TEXT.length];
    case 2: // truncated JSON (a writer killed mid-line, a line cut by a size limit)
      return record.slice(0, 20 + (i % (record.length - 21)));
    case 3: // binary junk, invalid UTF-8 included (no \n or \r: readline would cut a line at either)
      return Buffer.from(Array.from({ length: 40 + (i % 60) }, (_, k) => ((i * 31 + k * 97) % 254) + 1).map((b) => (b === 0x0a || b === 0x0d ? b + 1 : b)));
    case 4: // JSON, but not an object
      return i % 2 ? `[${record}]` : `"${r.id}"`;
    case 5: // an object without a latency (a health check, another app's log line)
      return `{"level":"info","msg":"health check","ts":"${iso(r.ms)}","ok":true}`;
    case 6: // two objects on one line
      return `${record}${record}`;
    case 7: // a latency that is not a number
      return `{"ts":"${iso(r.ms)}","latency_ms":"n/a","status":${r.status}}`;
    default: // trailing comma
      return `${record.slice(0, -1)},}`;
  }
}

/** The default shape with every fifth line replaced by garbage. */
function garbage(i) {
  if (i % 5 === 2) return garbageLine(i, requestAt(i));
  return defaultShaped(i);
}

/** Like generate-log.mjs's lines (default preset, the same key order), from requestAt. */
function defaultShaped(i) {
  const r = requestAt(i);
  return (
    `{"ts":"${iso(r.ms)}","request_id":"${r.id}","latency_ms":${r.latencyMs},"status":${r.status},"model":"${r.model}","route":"${ROUTES[r.route]}",` +
    `"cohort":"${r.cohort ? 'canary' : 'stable'}","response_headers":{${defaultResponse(r)}},"request_headers":{${defaultRequest(r)}}}`
  );
}

/** Caddy's access log: request headers in Go map order (it varies), every header an array of values. */
function caddy(i) {
  const r = requestAt(i);
  const reqHeaders = [
    `"X-Model":["${r.model}"]`,
    `"X-Cohort":["${r.cohort ? 'canary' : 'stable'}"]`,
    `"Content-Type":["application/json"]`,
    `"Content-Length":["412"]`,
    `"User-Agent":["${r.agent}"]`,
    ...(optInText(r) === undefined ? [] : [`"X-Anthropic-Experimental":["${optInText(r)}"]`]),
  ];
  const respHeaders = [
    `"Server":["Caddy"]`,
    `"Request-Id":["${rid(r)}"]`,
    `"X-Anthropic-Layer-Id":["${r.layer}"]`,
    ...(r.profile ? [`"X-Anthropic-Delay-Profile":["${r.profile}"]`] : []),
    ...(r.downgrade !== undefined ? [`"X-Anthropic-Downgrade-Reason":["${DOWNGRADE[r.downgrade]}"]`] : []),
    ...(r.cached ? [`"X-Anthropic-Cached":["true"]`] : []),
    `"Content-Type":["application/json; charset=utf-8"]`,
    `"Date":["${new Date(r.ms).toUTCString()}"]`,
  ];
  // Go randomises map iteration: rotate the header order per line, as Caddy's log shows.
  const rot = (a, k) => a.map((_, j) => a[(j + k) % a.length]);
  const seconds = (r.ms / 1000).toFixed(6);
  return (
    `{"level":"info","ts":${seconds},"logger":"http.log.access.log0","msg":"handled request","request":{"remote_ip":"${r.ip}","remote_port":"${r.port}",` +
    `"client_ip":"${r.ip}","proto":"HTTP/1.1","method":"POST","host":"llm.example","uri":"${ROUTES[r.route]}","headers":{${rot(reqHeaders, i % 5).join(',')}}},` +
    `"bytes_read":412,"user_id":"","duration":${(r.latencyMs / 1000).toFixed(9)},"size":${r.bytes},"status":${r.status},"resp_headers":{${rot(respHeaders, i % 3).join(',')}}}`
  );
}

/** The README's HAProxy log-format: every value a string, `-` for a header not sent. */
function haproxy(i) {
  const r = requestAt(i);
  const d = (v) => v ?? '-';
  return (
    `{"accept_ts":"${(r.ms / 1000).toFixed(3)}","ta_ms":"${Math.round(r.latencyMs)}","status":"${r.status}","path":"${ROUTES[r.route]}",` +
    `"capture_req_x_anthropic_experimental":"${d(optInText(r))}","capture_req_x_model":"${r.model}","capture_req_x_cohort":"${r.cohort ? 'canary' : 'stable'}",` +
    `"capture_res_x_anthropic_layer_id":"${r.layer}","capture_res_x_anthropic_delay_profile":"${d(r.profile)}","capture_res_x_anthropic_cached":"${r.cached ? 'true' : '-'}",` +
    `"capture_res_x_anthropic_downgrade_reason":"${d(r.downgrade === undefined ? undefined : DOWNGRADE[r.downgrade])}"}`
  );
}

/** Kong's file-log object, with its nested route, service, tries and latencies (test/golden/preset-kong-json.ndjson). */
function kong(i) {
  const r = requestAt(i);
  let res = `"content-type":"application/json","content-length":"${r.bytes}","date":"${new Date(r.ms).toUTCString()}","via":"1.1 kong/3.8.0.0-enterprise-edition","connection":"close","server":"gunicorn/19.9.0",`;
  res += `"x-anthropic-layer-id":"${r.layer}"`;
  if (r.profile) res += `,"x-anthropic-delay-profile":"${r.profile}"`;
  if (r.downgrade !== undefined) res += `,"x-anthropic-downgrade-reason":"${DOWNGRADE[r.downgrade]}"`;
  if (r.cached) res += ',"x-anthropic-cached":"true"';
  res += `,"x-kong-upstream-latency":"${Math.round(r.latencyMs) - 2}","x-kong-proxy-latency":"1","x-kong-request-id":"${r.id}${r.id}"`;
  const opt = optInText(r);
  const req = `"accept":"application/json","user-agent":"${r.agent}","host":"llm.example:8000","connection":"keep-alive","content-type":"application/json",${opt === undefined ? '' : `"x-anthropic-experimental":"${opt}",`}"x-model":"${r.model}","x-cohort":"${r.cohort ? 'canary' : 'stable'}"`;
  const start = r.ms;
  const lat = Math.round(r.latencyMs);
  return (
    `{"response":{"size":${r.bytes},"headers":{${res}},"status":${r.status}},"route":{"updated_at":1726782477,"tags":[],"response_buffering":true,"path_handling":"v0",` +
    `"protocols":["http","https"],"service":{"id":"fb4eecf8-dec2-40ef-b779-16de7e2384c7"},"https_redirect_status_code":426,"regex_priority":0,"name":"anthropic-messages",` +
    `"id":"0f1a4101-3327-4274-b1e4-484a4ab0c030","strip_path":false,"preserve_host":false,"created_at":1726782477,"request_buffering":true,` +
    `"ws_id":"f381e34e-5c25-4e65-b91b-3c0a86cfc393","paths":["${ROUTES[r.route]}"]},"workspace":"f381e34e-5c25-4e65-b91b-3c0a86cfc393","workspace_name":"default",` +
    `"tries":[{"balancer_start":${start},"balancer_start_ns":${start}e+6,"ip":"10.0.0.7","balancer_latency":0,"port":8443,"balancer_latency_ns":${27904 + (i % 1000)}}],` +
    `"client_ip":"${r.ip}","request":{"id":"${r.id}${r.id}","headers":{${req}},"uri":"${ROUTES[r.route]}","size":412,"method":"POST","querystring":{},` +
    `"url":"http://llm.example:8000${ROUTES[r.route]}"},"upstream_uri":"${ROUTES[r.route]}","started_at":${start},"source":"upstream","upstream_status":"${r.status}",` +
    `"latencies":{"kong":1,"proxy":${lat - 2},"request":${lat},"receive":1},"service":{"write_timeout":60000,"read_timeout":60000,"updated_at":1726782459,` +
    `"host":"api.zero-plane.internal","name":"zero-plane","id":"fb4eecf8-dec2-40ef-b779-16de7e2384c7","port":8443,"enabled":true,"created_at":1726782459,` +
    `"protocol":"https","ws_id":"f381e34e-5c25-4e65-b91b-3c0a86cfc393","connect_timeout":60000,"retries":5}}`
  );
}

/** Traefik's JSON access log (keys sorted, as its logrus formatter writes them); a header not sent has no key. */
function traefik(i) {
  const r = requestAt(i);
  const ns = Math.round(r.latencyMs * 1e6);
  const start = rfc3339Nano(r.ms, (i * 7919) % 1_000_000);
  const opt = optInText(r);
  const fields = [
    ['ClientAddr', `"${r.ip}:${r.port}"`],
    ['ClientHost', `"${r.ip}"`],
    ['ClientPort', `"${r.port}"`],
    ['ClientUsername', '"-"'],
    ['DownstreamContentSize', `${r.bytes}`],
    ['DownstreamStatus', `${r.status}`],
    ['Duration', `${ns}`],
    ['GzipRatio', '0'],
    ['OriginContentSize', `${r.bytes}`],
    ['OriginDuration', `${ns - 150000}`],
    ['OriginStatus', `${r.status}`],
    ['Overhead', '150000'],
    ['RequestAddr', '"llm.example"'],
    ['RequestContentSize', '412'],
    ['RequestCount', `${i + 1}`],
    ['RequestHost', '"llm.example"'],
    ['RequestMethod', '"POST"'],
    ['RequestPath', `"${ROUTES[r.route]}"`],
    ['RequestPort', '"-"'],
    ['RequestProtocol', '"HTTP/1.1"'],
    ['RequestScheme', '"https"'],
    ['RetryAttempts', '0'],
    ['RouterName', `"${ROUTES[r.route] === '/v1/messages' ? 'messages' : 'complete'}@file"`],
    ['ServiceAddr', '"10.0.0.7:8443"'],
    ['ServiceName', '"zero-plane@file"'],
    ['ServiceURL', '"https://10.0.0.7:8443"'],
    ['StartLocal', `"${start}"`],
    ['StartUTC', `"${start}"`],
    ['downstream_Content-Type', '"application/json"'],
    ...(r.cached ? [['downstream_X-Anthropic-Cached', '"true"']] : []),
    ...(r.profile ? [['downstream_X-Anthropic-Delay-Profile', `"${r.profile}"`]] : []),
    ...(r.downgrade !== undefined ? [['downstream_X-Anthropic-Downgrade-Reason', `"${DOWNGRADE[r.downgrade]}"`]] : []),
    ['downstream_X-Anthropic-Layer-Id', `"${r.layer}"`],
    ['entryPointName', '"websecure"'],
    ['level', '"info"'],
    ['msg', '""'],
    ...(opt === undefined ? [] : [['request_X-Anthropic-Experimental', `"${opt}"`]]),
    ['request_X-Cohort', `"${r.cohort ? 'canary' : 'stable'}"`],
    ['request_X-Model', `"${r.model}"`],
    ['time', `"${iso(Math.floor(r.ms / 1000) * 1000).replace('.000', '')}"`],
  ];
  return `{${fields.map(([k, v]) => `"${k}":${v}`).join(',')}}`;
}

/**
 * Every shape: the preset report must detect for it, and the mtail program that reads it (bench/mtail/DIR),
 * if mtail can: its regexes must count exactly what the report counts, so a shape whose lines mtail's
 * regexes would misread (garbage: truncated JSON still holds a latency) has none.
 */
export const SHAPES = {
  default: { preset: 'default', lineAt: (i) => lineAt(i), mtail: 'default', about: 'the default preset (bench/generate-log.mjs)' },
  reordered: { preset: 'default', lineAt: reordered, mtail: 'default', about: 'default preset, keys and header members in another order' },
  nginx: { preset: 'nginx-json', lineAt: nginx, mtail: 'nginx', about: 'nginx escape=json, `$time_iso8601` with +00:00, times in s' },
  envoy: { preset: 'envoy-json', lineAt: envoy, mtail: 'envoy', about: 'Envoy json_format, null for a header not sent' },
  wide: { preset: 'default', lineAt: wide, mtail: 'default', about: 'default preset with ~3.7 KB of other fields (~4 KB lines)' },
  'non-ascii': { preset: 'default', lineAt: nonAscii, mtail: 'default', about: 'Chinese text in route, cohort, a header value and a skipped field; +08:00 times' },
  garbage: { preset: 'default', lineAt: garbage, mtail: undefined, about: '20 % garbage lines: text, truncated JSON, binary, non-objects' },
  caddy: { preset: 'caddy-json', lineAt: caddy, mtail: 'caddy', about: "Caddy's access log: nested request, headers as arrays in varying order" },
  haproxy: { preset: 'haproxy-json', lineAt: haproxy, mtail: 'haproxy', about: "the README's HAProxy log-format: every value a string" },
  kong: { preset: 'kong-json', lineAt: kong, mtail: 'kong', about: "Kong's file-log object: deeply nested, ~1.9 KB lines" },
  traefik: { preset: 'traefik-json', lineAt: traefik, mtail: 'traefik', about: "Traefik's JSON access log: sorted keys, ns durations, RFC3339Nano" },
};

/** Writes lines [from, from + lines) of `shape` to `out` in 4 MiB batches; returns the number of bytes written. */
export function writeShape(out, shape, lines, from = 0) {
  const at = SHAPES[shape]?.lineAt;
  if (at === undefined) throw new Error(`unknown shape ${shape} (one of ${Object.keys(SHAPES).join(', ')})`);
  return writeLines(out, lines, (i) => at(from + i));
}

/**
 * The log of `shape` with `lines` lines as `dir`/`name`.ndjson, reused while its sidecar (.meta.json) says
 * it came from the same generators at that size; else written again (onWrite is told first, it takes a while).
 */
export function ensureShape(dir, shape, lines, { name = `${shape}-${lines}`, onWrite } = {}) {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.ndjson`);
  const metaFile = `${file}.meta.json`;
  const want = { shapes: SHAPES_VERSION, generator: GENERATOR_VERSION, shape, lines };
  if (existsSync(file) && existsSync(metaFile)) {
    const meta = JSON.parse(readFileSync(metaFile, 'utf8'));
    if (meta.shapes === want.shapes && meta.generator === want.generator && meta.shape === shape && meta.lines === lines && meta.bytes === statSync(file).size)
      return { file, lines, bytes: meta.bytes };
  }
  onWrite?.(file);
  const bytes = writeShape(file, shape, lines);
  writeFileSync(metaFile, JSON.stringify({ ...want, bytes }));
  return { file, lines, bytes };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [shape, linesArg, out] = process.argv.slice(2);
  if (out === undefined) throw new Error('usage: node bench/shapes.mjs SHAPE LINES OUT');
  const bytes = writeShape(out, shape, Number(linesArg));
  process.stderr.write(`wrote ${linesArg} ${shape} lines, ${bytes} bytes (${(bytes / Number(linesArg)).toFixed(1)} B/line) to ${out}\n`);
}
