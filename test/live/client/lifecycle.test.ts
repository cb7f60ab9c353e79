// The instrumented fetch at the end of a real process (a child node running the built dist/ with the real
// @anthropic-ai/sdk against the simulator): a script that makes its last call and returns delivers every
// record (beforeExit); SIGTERM under handleSignals flushes, then the process dies of SIGTERM as it would
// have; an exporter that is down or answers 503 forever, or a FIFO with no reader, neither hangs close()
// nor changes the exit code, and what was lost is counted. Also: the gate client does not buffer a gate
// endpoint that streams an endless body.
import { spawn, spawnSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gateClient } from '../../../src/client/index.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulate/simulator.js';
import { startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const CLIENT = pathToFileURL(join(import.meta.dirname, '..', '..', '..', 'dist', 'client', 'index.js')).href;
const SDK = pathToFileURL(createRequire(import.meta.url).resolve('@anthropic-ai/sdk')).href;
const CALLS = 12;

let simulator: RunningSimulator;
let exporter: ServeProcess;
const servers: Server[] = [];

beforeAll(async () => {
  simulator = await startSimulator({ seed: 26, fastLatency: { meanMs: 5, jitterMs: 1 }, fallbackLatency: { medianMs: 8, sigma: 0.2, maxMs: 20 } });
  const dir = tempDir('zp-life-exp-');
  writeFileSync(join(dir, 'zp.yml'), 'ingest:\n  enabled: true\n');
  exporter = await startServe([`--config.file=${join(dir, 'zp.yml')}`]);
});

afterAll(async () => {
  await exporter?.stop();
  await simulator?.close();
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
});

/** A child script: `calls` SDK calls through an instrumented fetch with `options`, then `tail` (its ending). */
function script(options: string, tail: string): string {
  const dir = tempDir('zp-life-child-');
  const file = join(dir, 'app.mjs');
  writeFileSync(
    file,
    `import Anthropic from ${JSON.stringify(SDK)};
import { instrumentFetch } from ${JSON.stringify(CLIENT)};
const zp = instrumentFetch(fetch, ${options});
const anthropic = new Anthropic({ apiKey: 'sk-test', baseURL: ${JSON.stringify(simulator.url)}, fetch: zp, maxRetries: 0 });
const model = 'claude-sonnet-4-5';
for (let i = 0; i < ${CALLS}; i++) {
  await anthropic.messages.create({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-anthropic-experimental': 'zero-plane-2024' } });
}
${tail}
`,
  );
  return file;
}

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function run(file: string, onStdout?: (text: string, kill: (s: NodeJS.Signals) => void) => void): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    // A child that never ends is the failure this file tests for: killed, and reported as such.
    const guard = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      onStdout?.(stdout, (s) => child.kill(s));
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      resolve({ code, signal, stdout, stderr, ms: performance.now() - t0 });
    });
  });
}

async function ingestedRequests(): Promise<number> {
  const text = await (await fetch(`${exporter.url}/metrics`)).text();
  // Every request the exporter counted, whatever its labels: the children's calls are all it is fed.
  return text
    .split('\n')
    .filter((line) => line.startsWith('zero_plane_requests_total{'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

describe('the instrumented fetch at the end of the process', () => {
  it('a script that makes its last call and returns (no close) delivers every record', async () => {
    const before = await ingestedRequests();
    // flushInterval 1 h: only the process's end can send the batch.
    const ended = await run(script(`{ to: { ingest: { url: ${JSON.stringify(exporter.url)}, flushInterval: '1h' } } }`, `console.log('done');`));
    expect(ended.stderr).toBe('');
    expect(ended).toMatchObject({ code: 0, signal: null });
    expect(ended.stdout).toBe('done\n');
    await waitFor(async () => ((await ingestedRequests()) === before + CALLS ? true : undefined), 5_000, 'the records at the exporter');
  });

  it('SIGTERM under handleSignals flushes every record, then the process dies of SIGTERM', async () => {
    const before = await ingestedRequests();
    const file = script(`{ handleSignals: true, to: { ingest: { url: ${JSON.stringify(exporter.url)}, flushInterval: '1h' } } }`, `console.log('ready'); setInterval(() => undefined, 1000);`);
    const ended = await run(file, (out, kill) => out === 'ready\n' && kill('SIGTERM'));
    expect(ended.stderr).toBe('');
    expect(ended).toMatchObject({ code: null, signal: 'SIGTERM' });
    expect(await ingestedRequests()).toBe(before + CALLS);
  });

  it('SIGTERM under handleSignals while a stream is being read: its call is recorded (unfinished) and flushed', async () => {
    // A stream whose events come 2 s apart: it is still being read when the signal comes.
    const slow = await startSimulator({ seed: 27, stream: { enabled: true, firstEventDelayMs: 20, eventGapMs: 2_000, deltas: 20 } });
    try {
      const before = await ingestedRequests();
      const file = join(tempDir('zp-life-stream-'), 'app.mjs');
      writeFileSync(
        file,
        `import Anthropic from ${JSON.stringify(SDK)};
import { instrumentFetch } from ${JSON.stringify(CLIENT)};
const zp = instrumentFetch(fetch, { handleSignals: true, to: { ingest: { url: ${JSON.stringify(exporter.url)}, flushInterval: '1h' } } });
const anthropic = new Anthropic({ apiKey: 'sk-test', baseURL: ${JSON.stringify(slow.url)}, fetch: zp, maxRetries: 0 });
const stream = anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
stream.on('text', () => console.log('streaming'));
await stream.finalMessage();
console.log('stream ended before the signal');
`,
      );
      const ended = await run(file, (out, kill) => out === 'streaming\n' && kill('SIGTERM'));
      expect(ended.stderr).toBe('');
      expect(ended).toMatchObject({ code: null, signal: 'SIGTERM' });
      expect(ended.stdout).toBe('streaming\n');
      expect(await ingestedRequests()).toBe(before + 1);
    } finally {
      await slow.close();
    }
  });

  it('an exporter answering 503 forever: close() resolves within closeTimeout, exit code 0, every record counted dropped', async () => {
    const down = createServer((_req, res) => res.writeHead(503).end('down'));
    servers.push(down);
    await new Promise<void>((resolve) => down.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(down.address() as AddressInfo).port}`;
    const ended = await run(
      script(
        `{ closeTimeout: '1s', warn: () => undefined, to: { ingest: { url: ${JSON.stringify(url)}, maxAttempts: 100 } } }`,
        `const t0 = performance.now(); await zp.close(); console.log(JSON.stringify({ ms: performance.now() - t0, ...zp.records() }));`,
      ),
    );
    expect(ended.stderr).toBe('');
    expect(ended).toMatchObject({ code: 0, signal: null });
    const out = JSON.parse(ended.stdout) as { ms: number; delivered: number; dropped: number; pending: number };
    expect(out).toMatchObject({ delivered: 0, dropped: CALLS, pending: 0 });
    // Bounded by closeTimeout (1 s), not by 100 attempts with back-off.
    expect(out.ms).toBeGreaterThanOrEqual(900);
    expect(out.ms).toBeLessThan(1_000 + 2_000);
  });

  it('an exporter that is down and never closed: the process still exits 0 on its own, records counted', async () => {
    const ended = await run(
      script(`{ closeTimeout: '1s', warn: () => undefined, to: { ingest: { url: 'http://127.0.0.1:9', maxAttempts: 100 } } }`, `process.on('exit', () => console.log(JSON.stringify(zp.records())));`),
    );
    expect(ended).toMatchObject({ code: 0, signal: null });
    expect(JSON.parse(ended.stdout)).toMatchObject({ delivered: 0, dropped: CALLS, pending: 0 });
  });

  it('a log file that is a FIFO with no reader: counted as dropped at once, and process.exit() exits', async () => {
    const dir = tempDir('zp-life-fifo-');
    const fifo = join(dir, 'calls.log');
    const made = spawnSync('mkfifo', [fifo]);
    expect(made.status).toBe(0);
    const ended = await run(
      script(`{ closeTimeout: '1s', warn: () => undefined, to: { logFile: ${JSON.stringify(fifo)} } }`, `await zp.close(); console.log(JSON.stringify(zp.records())); process.exit(0);`),
    );
    expect(ended).toMatchObject({ code: 0, signal: null });
    expect(JSON.parse(ended.stdout)).toMatchObject({ delivered: 0, dropped: CALLS, pending: 0 });
  });
});

describe('gateClient against a gate endpoint that streams an endless body', () => {
  it('stops reading at its cap, counts a failed poll and applies the failure policy', async () => {
    let sent = 0;
    let closedEarly = false;
    const flood = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const push = (): void => {
        while (!res.destroyed && res.write(chunk)) {
          sent += chunk.length;
          if (sent > 512 * 1024 * 1024) return void res.end();
        }
        if (!res.destroyed) res.once('drain', push);
      };
      res.on('close', () => (closedEarly = !res.writableFinished));
      push();
    });
    servers.push(flood);
    await new Promise<void>((resolve) => flood.listen(0, '127.0.0.1', resolve));
    const gate = gateClient({ url: `http://127.0.0.1:${(flood.address() as AddressInfo).port}`, pollInterval: '1h', failOpen: false, warn: () => undefined });
    try {
      expect(await gate.decide('non-core')).toEqual({ allowed: false, reason: 'fail_closed' });
      const polls = gate.families().find((f) => f.name === 'zero_plane_gate_client_polls_total');
      expect(polls?.text()).toContain('zero_plane_gate_client_polls_total{result="error"} 1');
      await waitFor(() => (closedEarly ? true : undefined), 5_000, 'the client to let the connection go');
      // The socket buffers hold a few MiB at most; the client read 64 KiB of it.
      expect(sent).toBeLessThan(64 * 1024 * 1024);
    } finally {
      gate.close();
    }
  });
});
