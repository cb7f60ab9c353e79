// The load generator against the simulator over real HTTP on loopback, and its log read back by the
// exporter's own engine (readInput → Pipeline → buildReport), as `report` would read it.
import { createServer } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../../src/config/schema.js';
import { LoadGenerator } from '../../../src/loadgen/load-generator.js';
import type { GatewayLogRecord } from '../../../src/loadgen/log-line.js';
import { Pipeline } from '../../../src/pipeline.js';
import { buildReport, type Report } from '../../../src/report/build-report.js';
import { classifyOptIn } from '../../../src/signals/opt-in.js';
import { EXPORTER_BASELINE_FAST_LATENCY } from '../../../src/simulate/profile.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulate/simulator.js';
import { readInput } from '../../../src/source/read-input.js';
import { freePort } from '../../helpers/processes.js';

let dir: string;
const running: RunningSimulator[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'zpe-loadgen-'));
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
  await rm(dir, { recursive: true, force: true });
});

async function simulator(opts: Parameters<typeof startSimulator>[0] = {}): Promise<RunningSimulator> {
  const s = await startSimulator({ seed: 3, ...opts });
  running.push(s);
  return s;
}

/** Polls `cond` every 10 ms, failing after 10 s. */
async function waitUntil(cond: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met within 10 s');
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function drive(gen: LoadGenerator, ms: number): Promise<void> {
  gen.start();
  await new Promise((r) => setTimeout(r, ms));
  await gen.stop();
}

async function report(logPath: string, config = defaultConfig()): Promise<Report> {
  const pipeline = new Pipeline(config, { keepTotals: true });
  await readInput(logPath, { maxLineBytes: config.input.maxLineBytes }, pipeline);
  return buildReport(pipeline, config);
}

async function records(logPath: string): Promise<GatewayLogRecord[]> {
  const text = await readFile(logPath, 'utf8');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as GatewayLogRecord);
}

describe('LoadGenerator', () => {
  it('writes one exporter-readable line per round trip at 50 req/s, with a plausible mix', async () => {
    const decided: number[] = [];
    const sim = await simulator({ onAnswer: (a) => void decided.push(a.decision.delayMs) });
    const logPath = join(dir, 'gateway.ndjson');
    const gen = new LoadGenerator({
      target: sim.url,
      ratePerSecond: 50,
      logPath,
      seed: 1,
      mix: { malformedOptIn: 0.15, missingOptIn: 0.05, longConversation: 0.1, repeatedBodies: 0.25, stream: 0.05, canary: 0.2 },
    });
    const t0 = performance.now();
    await drive(gen, 2_000);
    const elapsed = performance.now() - t0;

    const lines = await records(logPath);
    expect(lines.length).toBeGreaterThanOrEqual(50); // ~100 due; generous, so a busy machine cannot fail it
    // A request due while every slot is busy (a loaded machine) is dropped, not sent late: sent + dropped ≤ due.
    expect(lines.length + gen.stats.dropped).toBeLessThanOrEqual(Math.ceil((elapsed / 1000) * 50) + 1);
    expect(gen.stats).toMatchObject({ sent: lines.length, completed: lines.length, errors: 0 });
    expect(Object.values(gen.stats.byStatus).reduce((a, b) => a + b, 0)).toBe(lines.length);

    for (const l of lines) {
      expect(new Date(l.ts).toISOString()).toBe(l.ts);
      expect(l.latency_ms).toBeGreaterThan(0);
      expect(l.route).toBe('/v1/messages');
      expect(['claude-sonnet', 'claude-haiku']).toContain(l.model);
      expect(['stable', 'canary']).toContain(l.cohort);
      expect(l.response_headers['content-type']).toMatch(/^application\/json/);
    }
    // The simulator's rules, seen in the log: a defective opt-in is never served by the fast layer.
    const optIns = lines.map((l) => classifyOptIn(l.request_headers['x-anthropic-experimental'], 'zero-plane-2024'));
    const valid = optIns.filter((o) => o.state === 'valid').length;
    const malformed = optIns.filter((o) => o.state === 'malformed').length;
    const missing = optIns.filter((o) => o.state === 'missing').length;
    lines.forEach((l, i) => {
      if (optIns[i]?.state !== 'valid') expect(l.response_headers['x-anthropic-layer-id']).not.toBe('zero-plane-v1');
    });
    expect(malformed).toBeGreaterThan(0);
    expect(lines.some((l) => l.cohort === 'canary')).toBe(true);
    expect(gen.stats.byStatus['400']).toBeGreaterThan(0); // stream: true
    expect(gen.stats.byStatus['200']).toBeGreaterThan(lines.length * 0.8);

    const r = await report(logPath);
    expect(r.lines).toBe(lines.length);
    expect(r.records).toBe(lines.length);
    const sum = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
    expect(sum(r.parseErrors)).toBe(0);
    expect(sum(r.headerParseErrors)).toBe(0);
    expect(r.requests).toBe(lines.length);
    expect(r.optInHeader).toEqual({ valid, missing, malformed });
    expect(r.hits).toBeLessThanOrEqual(valid);
    expect(r.hits).toBeGreaterThan(valid * 0.7); // minus long conversations and stream requests
    expect(r.downgrades.context_too_long).toBeGreaterThan(0);
    expect(r.cachedCount).toBeGreaterThan(0);
    expect(r.degradedCount).toBe(0);
    expect(r.p50Seconds).toBeGreaterThan(0.114);
    // A round trip takes at least the delay the simulator decided for it, so the k-th shortest logged
    // latency is at least the k-th shortest decided delay (an upper bound would time the machine).
    expect(decided).toHaveLength(lines.length);
    const logged = lines.map((l) => l.latency_ms).sort((a, b) => a - b);
    const waited = [...decided].sort((a, b) => a - b);
    logged.forEach((ms, k) => expect(ms).toBeGreaterThanOrEqual((waited[k] as number) - 0.001)); // logged to the µs
  });

  it('makes the exporter see the P0 once drift and degraded faults are injected', async () => {
    // A fast layer whose p99 sits at the exporter's default 185 ms baseline, so +10 % drift crosses the ceiling.
    const sim = await simulator({ fastLatency: EXPORTER_BASELINE_FAST_LATENCY });
    const mix = { malformedOptIn: 0, missingOptIn: 0, longConversation: 0, longSystemPrompt: 0, repeatedBodies: 0, stream: 0 };
    const healthyLog = join(dir, 'healthy.ndjson');
    await drive(new LoadGenerator({ target: sim.url, ratePerSecond: 40, logPath: healthyLog, seed: 2, mix }), 1_200);
    sim.faults.set({ latencyDriftRatio: 0.15, degradedRate: 0.2 });
    const faultyLog = join(dir, 'faulty.ndjson');
    await drive(new LoadGenerator({ target: sim.url, ratePerSecond: 40, logPath: faultyLog, seed: 2, mix }), 1_200);

    const p0 = (r: Report) => r.alerts.find((a) => a.name === 'ZeroPlaneP0DriftWithDegraded')?.firing;
    const healthy = await report(healthyLog, { ...defaultConfig(), alerts: { minRequests: 1 } });
    expect(healthy.hitRate).toBe(1);
    expect(healthy.degradedCount).toBe(0);
    expect(p0(healthy)).toBe(false);
    // About 48 requests: under the default traffic guard (alerts.minRequests 200), so the verdict is
    // taken with the guard at 1; the arithmetic is what this test is about.
    const guard1 = { ...defaultConfig(), alerts: { minRequests: 1 } };
    const faulty = await report(faultyLog, guard1);
    expect(faulty.degradedCount).toBeGreaterThan(0);
    expect(faulty.p99Drift).toBeGreaterThan(0.05);
    expect(p0(faulty)).toBe(true);
    expect(p0(await report(faultyLog))).toBe(false);
  });

  it('counts connection errors against a closed port without throwing or writing lines', async () => {
    const port = await freePort();
    const logPath = join(dir, 'errors.ndjson');
    const errors: Error[] = [];
    const gen = new LoadGenerator({ target: `http://127.0.0.1:${port}`, ratePerSecond: 50, logPath, onError: (e) => errors.push(e) });
    await drive(gen, 500);
    expect(gen.stats.sent).toBeGreaterThan(10);
    expect(gen.stats.errors).toBe(gen.stats.sent);
    expect(gen.stats.completed).toBe(0);
    expect(errors).toHaveLength(gen.stats.errors);
    expect(errors[0]?.message).toMatch(/ECONNREFUSED/);
    expect(await readFile(logPath, 'utf8')).toBe('');
    // Stopped, it can start again and keeps counting.
    const before = gen.stats.errors;
    await drive(gen, 100);
    expect(gen.stats.errors).toBeGreaterThan(before);
  });

  it('keeps at most maxConcurrency requests in flight and counts the skipped ones', async () => {
    // The simulator holds every answer until the test releases it, so "in flight" does not depend on timing.
    const held: (() => void)[] = [];
    const sim = await simulator({ sleep: () => new Promise<void>((resolve) => held.push(resolve)) });
    const gen = new LoadGenerator({ target: `${sim.url}/v1/messages`, ratePerSecond: 100, logPath: join(dir, 'busy.ndjson'), maxConcurrency: 2, mix: { missingOptIn: 1, malformedOptIn: 0 } });
    gen.start();
    await waitUntil(() => gen.stats.dropped > 30);
    expect(gen.stats.sent).toBe(2);
    const stopped = gen.stop();
    await waitUntil(() => held.length === 2);
    for (const release of held) release();
    await stopped;
    expect(gen.stats.completed).toBe(2);
  });

  it('rejects a bad target, rate or mix when constructed', () => {
    const logPath = join(dir, 'x.ndjson');
    expect(() => new LoadGenerator({ target: 'not a url', ratePerSecond: 1, logPath })).toThrow(/target/);
    expect(() => new LoadGenerator({ target: 'ftp://127.0.0.1', ratePerSecond: 1, logPath })).toThrow(/http/);
    expect(() => new LoadGenerator({ target: 'http://127.0.0.1:1', ratePerSecond: 0, logPath })).toThrow(/ratePerSecond/);
    expect(() => new LoadGenerator({ target: 'http://127.0.0.1:1', ratePerSecond: 1, logPath, mix: { canary: 2 } })).toThrow(/canary/);
  });

  it('fails to start when the log cannot be opened', () => {
    const gen = new LoadGenerator({ target: 'http://127.0.0.1:1', ratePerSecond: 1, logPath: join(dir, 'missing-dir', 'x.ndjson') });
    expect(() => gen.start()).toThrow(/ENOENT/);
  });

  it('logReportedAnswerTime logs the answer time the response reports instead of the round trip', async () => {
    const server = createServer((req, res) => {
      req.resume();
      res.setHeader('server-timing', 'answer;dur=123.456');
      req.on('end', () => res.end('{}'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const target = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      const logPath = join(dir, 'late.log');
      await drive(new LoadGenerator({ target, ratePerSecond: 20, logPath, logReportedAnswerTime: true }), 300);
      const lines = await records(logPath);
      expect(lines.length).toBeGreaterThan(0);
      for (const l of lines) expect(l.latency_ms).toBe(123.456);
      // Without the option, the same answers are logged as measured.
      const plainPath = join(dir, 'plain.log');
      await drive(new LoadGenerator({ target, ratePerSecond: 20, logPath: plainPath }), 300);
      for (const l of await records(plainPath)) expect(l.latency_ms).not.toBe(123.456);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
