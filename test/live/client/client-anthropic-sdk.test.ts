// The real Anthropic SDK, pointed at the simulator on 127.0.0.1 through instrumentFetch: a known mix of
// calls (valid, invisible-character, stray-space and wrong-case opt-ins, none, long conversations, four
// identical bodies, stream: true, a degraded fault). The in-process signals and the `report` of the
// written log must equal what the simulator answered, exactly; `repair` turns the invisible character
// into a hit; `reject` sends nothing at all.
import { createServer, type Server } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instrumentFetch, metricsText, OptInHeaderError, type InstrumentedFetch } from '../../../src/client/index.js';
import { wireText } from '../../../src/client/opt-in-guard.js';
import { wireHeaderValue } from '../../../src/loadgen/mix.js';
import { DelayProfileReader } from '../../../src/signals/delay-profile.js';
import { classifyOptIn } from '../../../src/signals/opt-in.js';
import { startSimulator, type RunningSimulator, type SimulatorAnswer } from '../../../src/simulate/simulator.js';
import { runCli, startServe, type ServeProcess } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const OPT_IN = 'x-anthropic-experimental';
const VALID = 'zero-plane-2024';
const profiles = new DelayProfileReader({ degradedMember: 'degraded', warmupMember: 'warmup', modeMember: 'mode' });

/**
 * The opt-in values of the mix, as an SDK user's code would hold them. fetch takes header values as byte
 * strings (Latin-1): a raw U+200B makes the SDK's own Headers throw before any fetch is called, so the
 * invisible characters that do reach the wire are U+00AD and UTF-8 bytes carried as Latin-1 (a value read
 * from a file or another program's environment), which a server decodes back to U+200B.
 */
const OPT_INS: Record<string, string | undefined> = {
  valid: VALID,
  softHyphen: 'zero-plane\u00ad-2024',
  zeroWidthBytes: wireHeaderValue(`${VALID}\u200b`),
  nbsp: `${VALID}\u00a0`,
  wrongCase: 'Zero-Plane-2024',
  none: undefined,
};

let seq = 0;
function body(turns = 1, text?: string): Anthropic.MessageCreateParamsNonStreaming {
  const words = text ?? `question ${++seq}`;
  return {
    model: 'claude-sonnet',
    max_tokens: 64,
    messages: Array.from({ length: turns }, (_, i) => ({ role: i % 2 === 0 ? ('user' as const) : ('assistant' as const), content: `${words} / ${i}` })),
  };
}

const optInHeaders = (value: string | undefined) => (value === undefined ? {} : { headers: { [OPT_IN]: value } });

/** Runs the mix through `client`, returning the opt-in values sent (in order, one per call). */
async function runMix(client: Anthropic, simulator: RunningSimulator): Promise<(string | undefined)[]> {
  const sent: (string | undefined)[] = [];
  const send = async (params: Anthropic.MessageCreateParams, value: string | undefined) => {
    sent.push(value);
    try {
      await client.messages.create(params, optInHeaders(value));
    } catch (err) {
      // stream: true is a 400 from the simulator; anything else is a real failure
      if (!(err instanceof Anthropic.BadRequestError)) throw err;
    }
  };
  for (let i = 0; i < 12; i++) await send(body(), OPT_INS.valid);
  for (const name of ['softHyphen', 'zeroWidthBytes', 'nbsp', 'wrongCase', 'none']) await send(body(), OPT_INS[name]);
  for (const turns of [9, 11]) await send(body(turns), OPT_INS.valid); // longer than the fast layer takes
  for (let i = 0; i < 4; i++) await send(body(1, 'the same question'), OPT_INS.valid); // the 4th is cached
  await send({ ...body(), stream: true } as Anthropic.MessageCreateParams, OPT_INS.valid);
  simulator.faults.set({ degradedRate: 1 });
  for (let i = 0; i < 3; i++) await send(body(), OPT_INS.valid);
  simulator.faults.reset();
  for (let i = 0; i < 3; i++) await send(body(), OPT_INS.valid);
  return sent;
}

interface Expected {
  requests: number;
  hits: number;
  degradedCount: number;
  warmupHits: number;
  warmupMisses: number;
  cachedCount: number;
  downgrades: Record<string, number>;
  optInHeader: Record<string, number>;
  optInDefects: Record<string, number>;
  byStatus: Record<string, number>;
}

/** What the simulator answered, counted by the header contract, independently of the exporter's code. */
function expectedFrom(answers: SimulatorAnswer[], sent: (string | undefined)[]): Expected {
  const e: Expected = {
    requests: 0,
    hits: 0,
    degradedCount: 0,
    warmupHits: 0,
    warmupMisses: 0,
    cachedCount: 0,
    downgrades: {},
    optInHeader: { malformed: 0, missing: 0, valid: 0 },
    optInDefects: {},
    byStatus: {},
  };
  for (const { decision } of answers) {
    const h = decision.headers;
    const hit = /^zero-plane-v[0-9]+$/.test(h['x-anthropic-layer-id'] ?? '');
    const profile = h['x-anthropic-delay-profile'] === undefined ? undefined : profiles.read(h['x-anthropic-delay-profile']);
    e.requests++;
    if (hit) e.hits++;
    if (profile?.degraded) e.degradedCount++;
    if (hit && profile?.warmup === 'hit') e.warmupHits++;
    if (hit && profile?.warmup === 'miss') e.warmupMisses++;
    if (h['x-anthropic-cached'] === 'true') e.cachedCount++;
    const reason = h['x-anthropic-downgrade-reason'];
    if (reason !== undefined) e.downgrades[reason] = (e.downgrades[reason] ?? 0) + 1;
    e.byStatus[`${String(decision.status)[0]}xx`] = (e.byStatus[`${String(decision.status)[0]}xx`] ?? 0) + 1;
  }
  for (const value of sent) {
    const o = classifyOptIn(value === undefined ? undefined : wireText(value), VALID);
    e.optInHeader[o.state] = (e.optInHeader[o.state] ?? 0) + 1;
    if (o.defect !== undefined) e.optInDefects[o.defect] = (e.optInDefects[o.defect] ?? 0) + 1;
  }
  return e;
}

/** Every sample of a family in exposition text: labels text → value. */
function samples(text: string, name: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`).exec(line);
    if (m) out.set(m[1] ?? '', Number(m[2]));
  }
  return out;
}
const sum = (m: Map<string, number>, where: (labels: string) => boolean = () => true) => [...m].filter(([l]) => where(l)).reduce((a, [, v]) => a + v, 0);

/** The exporter's counters in exposition text equal what the simulator answered. */
function expectCounters(text: string, e: Expected): void {
  const requests = samples(text, 'zero_plane_requests_total');
  expect(sum(requests)).toBe(e.requests);
  expect(sum(requests, (l) => l.includes('hit="true"'))).toBe(e.hits);
  for (const [cls, n] of Object.entries(e.byStatus))
    expect(
      sum(requests, (l) => l.includes(`status_class="${cls}"`)),
      cls,
    ).toBe(n);
  expect(sum(requests, (l) => l.includes('route="/v1/messages"') && l.includes('model="claude-sonnet"'))).toBe(e.requests);
  expect(sum(samples(text, 'zero_plane_degraded_requests_total'))).toBe(e.degradedCount);
  expect(sum(samples(text, 'zero_plane_warmup_total'), (l) => l.includes('outcome="hit"'))).toBe(e.warmupHits);
  expect(sum(samples(text, 'zero_plane_warmup_total'), (l) => l.includes('outcome="miss"'))).toBe(e.warmupMisses);
  expect(sum(samples(text, 'zero_plane_cached_responses_total'))).toBe(e.cachedCount);
  for (const [reason, n] of Object.entries(e.downgrades)) expect(samples(text, 'zero_plane_downgrades_total').get(`{reason="${reason}"}`), reason).toBe(n);
  const optIn = samples(text, 'zero_plane_opt_in_header_total');
  for (const [state, n] of Object.entries(e.optInHeader))
    expect(
      sum(optIn, (l) => l.includes(`state="${state}"`)),
      state,
    ).toBe(n);
  for (const [defect, n] of Object.entries(e.optInDefects)) expect(optIn.get(`{state="malformed",defect="${defect}"}`), defect).toBe(n);
}

const quiet = { warn: () => undefined };
let simulator: RunningSimulator;
const answers: SimulatorAnswer[] = [];

beforeAll(async () => {
  simulator = await startSimulator({ seed: 15, fastLatency: { meanMs: 20, jitterMs: 2 }, fallbackLatency: { medianMs: 30, sigma: 0.2, maxMs: 60 }, onAnswer: (a) => answers.push(a) });
});
afterAll(async () => {
  await simulator?.close();
});

function sdk(fetch: InstrumentedFetch, baseURL = simulator.url): Anthropic {
  return new Anthropic({ apiKey: 'sk-test', baseURL, fetch, maxRetries: 0 });
}

describe('instrumentFetch with the Anthropic SDK against the simulator', () => {
  it('in-process signals equal the simulator’s answers exactly', async () => {
    answers.length = 0;
    const zp = instrumentFetch(fetch, quiet);
    const sent = await runMix(sdk(zp), simulator);
    const e = expectedFrom(answers, sent);
    expect(answers).toHaveLength(sent.length);
    // The mix reaches every case: falls back, downgrades, a cache hit, a 400, degraded answers, warm-up misses.
    expect(e.hits).toBeLessThan(e.requests);
    expect(e.downgrades.context_too_long).toBe(2);
    expect(e.cachedCount).toBe(1);
    expect(e.byStatus['4xx']).toBe(1);
    expect(e.degradedCount).toBe(3);
    expect(e.optInDefects).toEqual({ case: 1, invisible_char: 2, whitespace: 1 });

    const s = zp.signals();
    expect(s?.window).toMatchObject({
      requests: e.requests,
      hits: e.hits,
      hitRate: e.hits / e.requests,
      degradedCount: e.degradedCount,
      warmupEfficiency: e.warmupHits / (e.warmupHits + e.warmupMisses),
    });
    expect(s?.verdicts.degraded).toBe('unhealthy');

    const text = metricsText([zp]);
    expectCounters(text, e);
    // report mode: the defects were sent as they were and counted by the guard too.
    expect(sum(samples(text, 'zero_plane_client_opt_in_guard_total'), (l) => l.includes('action="reported"'))).toBe(4);
    expect(sum(samples(text, 'zero_plane_client_instrumentation_errors_total'))).toBe(0);
    // The histogram holds every call; each latency includes the simulator's own delay.
    const durations = samples(text, 'zero_plane_request_duration_seconds_count');
    expect(sum(durations)).toBe(e.requests);
    const decidedSeconds = answers.reduce((a, x) => a + x.decision.delayMs, 0) / 1000;
    expect(sum(samples(text, 'zero_plane_request_duration_seconds_sum'))).toBeGreaterThanOrEqual(decidedSeconds - answers.length * 0.001);
  });

  it('the log file it writes gives a `report` equal to the simulator’s answers exactly', async () => {
    answers.length = 0;
    const log = join(tempDir('zp-client-log-'), 'calls.jsonl');
    const zp = instrumentFetch(fetch, { ...quiet, to: { logFile: log } });
    const sent = await runMix(sdk(zp), simulator);
    await zp.close();
    const e = expectedFrom(answers, sent);
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(sent.length);
    // Sent one after the other: line i is answer i, and its latency is at least the delay decided for it.
    lines.forEach((line, i) => {
      const rec = JSON.parse(line) as { latency_ms: number; status: number };
      expect(rec.status).toBe(answers[i]?.decision.status);
      expect(rec.latency_ms).toBeGreaterThanOrEqual((answers[i]?.decision.delayMs ?? 0) - 1);
    });

    const run = runCli(['report', '--format=json', log]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(report).toMatchObject({
      lines: sent.length,
      records: e.requests,
      requests: e.requests,
      hits: e.hits,
      hitRate: e.hits / e.requests,
      degradedCount: e.degradedCount,
      warmupHits: e.warmupHits,
      warmupMisses: e.warmupMisses,
      warmupEfficiency: e.warmupHits / (e.warmupHits + e.warmupMisses),
      cachedCount: e.cachedCount,
      downgrades: e.downgrades,
      optInHeader: e.optInHeader,
      optInDefects: { ...e.optInDefects, value: 0 },
    });
    expect(Object.values(report.parseErrors as Record<string, number>).every((n) => n === 0)).toBe(true);
  });

  it('batches sent to a running exporter’s /api/v1/ingest give its /metrics the simulator’s answers exactly', async () => {
    const dir = tempDir('zp-client-ingest-');
    writeFileSync(join(dir, 'token'), 'ingest-secret\n');
    writeFileSync(join(dir, 'zp.yml'), `ingest:\n  enabled: true\n  bearerTokenFile: ${join(dir, 'token')}\n`);
    let exporter: ServeProcess | undefined;
    try {
      exporter = await startServe([`--config.file=${join(dir, 'zp.yml')}`]);
      answers.length = 0;
      // Batches of 7: the mix goes out in several requests, the last one by close().
      const zp = instrumentFetch(fetch, { ...quiet, to: { ingest: { url: exporter.url, bearerToken: 'ingest-secret', batchRecords: 7, flushInterval: '10s' } } });
      const sent = await runMix(sdk(zp), simulator);
      await zp.close();
      const e = expectedFrom(answers, sent);
      expectCounters(await (await fetch(`${exporter.url}/metrics`)).text(), e);
      const records = samples(metricsText([zp]), 'zero_plane_client_records_total');
      expect(records.get('{to="ingest",result="delivered"}')).toBe(e.requests);
      expect(records.get('{to="ingest",result="dropped"}')).toBe(0);
      expect(records.get('{to="ingest",result="rejected"}')).toBe(0);
    } finally {
      await exporter?.stop();
    }
  });

  it('repair sends the invisible-character value fixed, and it becomes a hit', async () => {
    answers.length = 0;
    const zp = instrumentFetch(fetch, { ...quiet, optIn: 'repair' });
    const client = sdk(zp);
    await client.messages.create(body(), optInHeaders(OPT_INS.zeroWidthBytes));
    await client.messages.create(body(), optInHeaders(OPT_INS.softHyphen));
    await client.messages.create(body(), optInHeaders(OPT_INS.nbsp));
    await client.messages.create(body(), optInHeaders(OPT_INS.wrongCase)); // a different value: not guessed
    expect(answers.map((a) => a.optIn)).toEqual([VALID, VALID, VALID, 'Zero-Plane-2024']);
    expect(answers.map((a) => a.decision.outcome)).toEqual(['fast', 'fast', 'fast', 'fallback']);
    const s = zp.signals();
    expect(s?.window.requests).toBe(4);
    expect(s?.window.hits).toBe(3);
    const text = metricsText([zp]);
    const guard = samples(text, 'zero_plane_client_opt_in_guard_total');
    expect(guard.get('{action="repaired",defect="invisible_char"}')).toBe(2);
    expect(guard.get('{action="repaired",defect="whitespace"}')).toBe(1);
    expect(guard.get('{action="reported",defect="case"}')).toBe(1);
    // What went out is what is counted: three valid opt-ins, one malformed.
    expect(samples(text, 'zero_plane_opt_in_header_total').get('{state="valid",defect=""}')).toBe(3);
    expect(samples(text, 'zero_plane_opt_in_header_total').get('{state="malformed",defect="case"}')).toBe(1);
  });
});

describe('optIn: reject', () => {
  let server: Server;
  let url: string;
  const seen = { connections: 0, bytes: 0, requests: 0 };

  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.requests++;
      req.resume();
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            model: 'claude-sonnet',
            content: [{ type: 'text', text: 'ok' }],
            stop_reason: 'end_turn',
            stop_sequence: null,
            usage: { input_tokens: 1, output_tokens: 1 },
          }),
        );
      });
    });
    server.on('connection', (socket) => {
      seen.connections++;
      socket.on('data', (chunk: Buffer) => (seen.bytes += chunk.length));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('throws before any byte is sent, naming the defect; a valid call then goes through', async () => {
    const warnings: string[] = [];
    const zp = instrumentFetch(fetch, { optIn: 'reject', warn: (m) => warnings.push(m) });
    const client = sdk(zp, url);
    let thrown: unknown;
    try {
      await client.messages.create(body(), optInHeaders(OPT_INS.zeroWidthBytes));
    } catch (err) {
      thrown = err;
    }
    // The SDK reports a failed fetch as a connection error; ours is its cause.
    const cause = thrown instanceof OptInHeaderError ? thrown : (thrown as { cause?: unknown } | undefined)?.cause;
    expect(cause).toBeInstanceOf(OptInHeaderError);
    expect((cause as OptInHeaderError).defect).toBe('invisible_char');
    expect((cause as OptInHeaderError).message).toContain('U+200B');
    expect(seen).toEqual({ connections: 0, bytes: 0, requests: 0 });
    await expect(zp(`${url}/v1/messages`, { method: 'POST', headers: { [OPT_IN]: 'ZERO-PLANE-2024' }, body: '{}' })).rejects.toThrow(/case/);
    expect(seen.bytes).toBe(0);

    await client.messages.create(body(), optInHeaders(VALID));
    expect(seen.connections).toBe(1);
    expect(seen.requests).toBe(1);
    expect(seen.bytes).toBeGreaterThan(0);
    const guard = samples(metricsText([zp]), 'zero_plane_client_opt_in_guard_total');
    expect(guard.get('{action="rejected",defect="invisible_char"}')).toBe(1);
    expect(guard.get('{action="rejected",defect="case"}')).toBe(1);
    expect(warnings).toHaveLength(2); // once per defect kind
    // Rejected calls were never requests: only the valid one is recorded.
    expect(zp.signals()?.window.requests).toBe(1);
  });
});

describe('the instrumentation never fails the call', () => {
  it('a destination that throws is counted, and the response is the one fetch gave', async () => {
    const dir = tempDir('zp-client-ro-');
    writeFileSync(join(dir, 'not-a-dir'), '');
    const zp = instrumentFetch(fetch, { ...quiet, to: { logFile: join(dir, 'not-a-dir', 'calls.jsonl') } });
    const client = sdk(zp);
    const message = await client.messages.create(body(), optInHeaders(VALID));
    expect(message.type).toBe('message');
    await zp.flush();
    const text = metricsText([zp]);
    expect(samples(text, 'zero_plane_client_records_total').get('{to="log-file",result="dropped"}')).toBe(1);
    expect(samples(text, 'zero_plane_client_records_total').get('{to="log-file",result="delivered"}')).toBe(0);
  });
});
