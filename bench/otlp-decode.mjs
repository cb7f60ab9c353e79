#!/usr/bin/env node
// The cost of an OTLP/HTTP logs request before counting: decode and map each log record to the record the
// pipeline counts, in one thread, for the receiver as it was (protobufjs decode, then toObject over the
// whole request into plain objects) and as it is (the decoded message objects read directly). Both run
// side by side in one process, alternating round by round on the same body; the ratio is per round.
//   node --expose-gc bench/otlp-decode.mjs [--records 10000] [--rounds 9] [--encoding protobuf|json|both] [--before ROOT]
// --before ROOT: "before" is that checkout's receiver (its dist/ decode and mapping, e.g. `git worktree add
// /tmp/before main`, node_modules linked, `npm run build`), run in this same process. Without it, "before"
// is this build's mapping over a toObject copy of the request (what only the copy costs).
// Times are CPU milliseconds of the process (user + system, process.cpuUsage), each run after a full GC
// (with --expose-gc): on a loaded machine, wall time mostly measures the wait for a core.
// The body is what Envoy's OpenTelemetry access logger exports with docs/otlp.md's config: one resource
// (service.name, k8s.*), every record's body a kvlist of the envoy-json fields as strings, its times and
// trace ids set. Every round checks that both paths give exactly the same records. Measures dist/: run
// `npm run build` first.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { loadavg, cpus } from 'node:os';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = (root, p) => import(pathToFileURL(join(root, 'dist', p)).href);
const { decodeLogsRequest, otlpMessages } = await dist(ROOT, 'ingest/otlp-proto.js');
const { OtlpMapper } = await dist(ROOT, 'ingest/otlp-map.js');
const { configSchema } = await dist(ROOT, 'config/schema.js');
const { SignalClassifier } = await dist(ROOT, 'signals/classify.js');

function parseArgs(argv) {
  const a = { records: 10_000, rounds: 9, encoding: 'both' };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split('=', 2);
    const value = () => inline ?? argv[++i];
    if (flag === '--records') a.records = Number(value());
    else if (flag === '--rounds') a.rounds = Number(value());
    else if (flag === '--encoding') a.encoding = value();
    else if (flag === '--before') a.before = resolve(value());
    else throw new Error(`unknown flag ${flag} (see the header of bench/otlp-decode.mjs)`);
  }
  return a;
}
const args = parseArgs(process.argv.slice(2));
const gc = globalThis.gc ?? (() => {});
if (globalThis.gc === undefined) console.warn('run with node --expose-gc: without it, one run pays for the garbage of the one before');
/** CPU ms of fn(), after a full GC. */
function cpuMs(fn) {
  gc();
  const t0 = process.cpuUsage();
  const out = fn();
  const d = process.cpuUsage(t0);
  return { ms: (d.user + d.system) / 1000, out };
}

/** The request as Envoy's OpenTelemetry access logger exports it, `n` records (deterministic). */
function envoyRequest(n) {
  const start = Date.UTC(2026, 11, 3, 12, 0, 0);
  const s = (key, v) => ({ key, value: { stringValue: v } });
  const logRecords = Array.from({ length: n }, (_, i) => {
    const ms = start + i * 7;
    const nanos = `${ms}${String(123_456 + i).padStart(6, '0')}`;
    return {
      timeUnixNano: nanos,
      observedTimeUnixNano: nanos,
      severityNumber: 9,
      traceId: Buffer.from(`${String(i).padStart(16, '0')}`).toString('base64'),
      spanId: Buffer.from(String(i).padStart(8, '0')).toString('base64'),
      body: {
        kvlistValue: {
          values: [
            s('start_time', new Date(ms).toISOString()),
            s('duration', String(120 + ((i * 37) % 400))),
            s('response_code', i % 13 === 7 ? '429' : '200'),
            s('route_name', i % 5 === 0 ? 'health' : 'messages'),
            s('model', i % 2 === 0 ? 'claude-sonnet-4-20250514' : 'claude-haiku-3-5'),
            s('cohort', i % 6 === 5 ? 'canary' : 'stable'),
            s('resp_x_anthropic_layer_id', i % 4 === 3 ? '-' : 'zero-plane-v1'),
            s('resp_x_anthropic_delay_profile', i % 3 === 0 ? 'warmup=hit, degraded=?0, mode=balanced' : 'warmup=miss, degraded=?0, mode=strict'),
            s('resp_x_anthropic_cached', i % 9 === 4 ? '1' : '-'),
            s('resp_x_anthropic_downgrade_reason', i % 11 === 6 ? 'capacity' : '-'),
            s('req_x_anthropic_experimental', i % 5 === 1 ? '-' : 'zero-plane-2024'),
          ],
        },
      },
      attributes: [s('http.route', i % 5 === 0 ? '/health' : '/v1/messages'), s('upstream_cluster', 'anthropic-api'), { key: 'bytes_received', value: { intValue: String(900 + i) } }],
    };
  });
  const resource = { attributes: [s('service.name', 'envoy'), s('k8s.namespace.name', 'llm-gateway'), s('k8s.cluster.name', 'eu-1'), s('k8s.pod.name', 'envoy-7d9f8c6b5-x2k4q')] };
  return { resourceLogs: [{ resource, scopeLogs: [{ scope: { name: 'envoy.access_loggers.open_telemetry' }, logRecords }] }] };
}

const config = configSchema.parse({});
const wanted = new SignalClassifier(config.headers);
const mapOptions = {
  generic: config.ingest.otlp.generic,
  maxValueDepth: config.ingest.otlp.maxValueDepth,
  maxLineBytes: config.input.maxLineBytes,
  latencyList: config.input.latencyList,
  maxLatencySeconds: config.input.maxLatency / 1000,
  absentValues: config.input.absentValues,
  responseHeaderNames: wanted.responseHeaderNames,
  requestHeaderNames: wanted.requestHeaderNames,
};
const mapper = new OtlpMapper(mapOptions);
const { request } = otlpMessages();
/** The receiver before: the whole request copied to plain objects, 64-bit integers as strings, bytes as base64. */
const TO_OBJECT = { longs: String, bytes: String, defaults: false, arrays: false, oneofs: false };

/** What the receiver does with a request before counting (otlp-router.ts): entries per resource, a decision, a record each. */
function mapAll(decoded, m = mapper) {
  const out = [];
  for (const rl of decoded.resourceLogs ?? []) {
    m.resourceAttributes(rl.resource?.attributes);
    const entries = (rl.scopeLogs ?? []).flatMap((sl) => (sl.logRecords ?? []).map((r) => m.entry(r)));
    const { preset } = m.decide(entries, 'auto', undefined);
    for (const e of entries) out.push(m.read(e, preset));
  }
  return out;
}

const other =
  args.before === undefined
    ? undefined
    : {
        proto: await dist(args.before, 'ingest/otlp-proto.js'),
        mapper: new (await dist(args.before, 'ingest/otlp-map.js')).OtlpMapper(mapOptions),
      };
const PATHS = other
  ? {
      protobuf: { before: (body) => mapAll(other.proto.decodeLogsRequest(body, 'protobuf'), other.mapper), now: (body) => mapAll(decodeLogsRequest(body, 'protobuf')) },
      json: { before: (body) => mapAll(other.proto.decodeLogsRequest(body, 'json'), other.mapper), now: (body) => mapAll(decodeLogsRequest(body, 'json')) },
    }
  : {
      protobuf: {
        before: (body) => mapAll(request.toObject(request.decode(body), TO_OBJECT)),
        now: (body) => mapAll(decodeLogsRequest(body, 'protobuf')),
      },
      json: {
        before: (body) => mapAll(request.toObject(request.fromObject(JSON.parse(body.toString('utf8'))), TO_OBJECT)),
        now: (body) => mapAll(decodeLogsRequest(body, 'json')),
      },
    };

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const obj = envoyRequest(args.records);
const bodies = {
  protobuf: Buffer.from(request.encode(request.fromObject(structuredClone(obj))).finish()),
  // OTLP/JSON writes trace ids as hex; the receiver drops them (stripIds), so this body leaves them out.
  json: Buffer.from(
    JSON.stringify({ resourceLogs: obj.resourceLogs.map((rl) => ({ ...rl, scopeLogs: rl.scopeLogs.map((sl) => ({ ...sl, logRecords: sl.logRecords.map(({ traceId, spanId, ...r }) => r) })) })) }),
  ),
};

console.log(
  `Machine: ${cpus()[0]?.model ?? 'unknown'} × ${cpus().length}; load ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}; node ${process.version}`,
);
for (const encoding of args.encoding === 'both' ? ['protobuf', 'json'] : [args.encoding]) {
  const body = bodies[encoding];
  const { before, now } = PATHS[encoding];
  const a = before(body);
  const b = now(body);
  if (a.length !== args.records || !a.every((r) => r.ok)) throw new Error(`${encoding}: the body did not read as ${args.records} records`);
  if (!isDeepStrictEqual(a, b)) throw new Error(`${encoding}: the two paths read different records`);
  // One warm-up each, then alternating rounds (the order flips each round).
  const t = { before: [], now: [] };
  const ratios = [];
  for (let round = 0; round < args.rounds; round++) {
    const order = round % 2 === 0 ? ['before', 'now'] : ['now', 'before'];
    const took = {};
    for (const which of order) {
      const fn = which === 'before' ? before : now;
      const { ms, out } = cpuMs(() => fn(body));
      took[which] = ms;
      if (out.length !== args.records) throw new Error('lost records');
    }
    t.before.push(took.before);
    t.now.push(took.now);
    ratios.push(took.before / took.now);
  }
  const perRecord = (ms) => `${((ms * 1e6) / args.records).toFixed(0)} ns`;
  console.log(
    `${encoding}: ${args.records} records, ${(body.length / 1e6).toFixed(2)} MB; before CPU median ${median(t.before).toFixed(1)} ms (${perRecord(median(t.before))}/record), ` +
      `now ${median(t.now).toFixed(1)} ms (${perRecord(median(t.now))}/record); before/now per round: median ${median(ratios).toFixed(2)}× [${ratios.map((r) => r.toFixed(2)).join(' ')}]; records identical`,
  );
}
// Where the time goes now, protobuf: decode alone, and the mapping of the decoded messages alone.
{
  const body = bodies.protobuf;
  const dec = [];
  const map = [];
  const toObj = [];
  for (let round = 0; round < args.rounds; round++) {
    const decoded = cpuMs(() => request.decode(body));
    dec.push(decoded.ms);
    toObj.push(cpuMs(() => request.toObject(decoded.out, TO_OBJECT)).ms);
    map.push(cpuMs(() => mapAll(decoded.out)).ms);
  }
  console.log(`protobuf parts (CPU medians): decode ${median(dec).toFixed(1)} ms, toObject ${median(toObj).toFixed(1)} ms (no longer done), map ${median(map).toFixed(1)} ms`);
}
