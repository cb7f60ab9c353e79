// Checkpoints: written atomically, read back exactly. A crash in the middle of a write leaves the
// previous checkpoint whole; SIGTERM writes a final one and a restart goes on from it line for line;
// counts are never restored into other histogram buckets; a long downtime is caught up only as far as
// the cap, the rest counted as skipped; a bad schedule is a config error; bounded labels map the same.
import { appendFileSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tempDir } from '../../helpers/temp-dir.js';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readCheckpointFile, writeCheckpointFile } from '../../../src/checkpoint/checkpoint-file.js';
import { loadCheckpoint } from '../../../src/checkpoint/checkpointer.js';
import { createLogger } from '../../../src/server/logger.js';
import { runCli, sample, startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';

/** Once a year: only the shutdown write happens during a test. */
const YEARLY = '0 0 0 1 1 *';

function gw(n: number, model = `m${n % 3}`): string {
  return `${JSON.stringify({
    ts: new Date().toISOString(),
    latency_ms: 150 + (n % 50),
    status: 200,
    model,
    route: '/v1/messages',
    response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1' },
  })}\n`;
}

function lines(from: number, to: number, model?: (n: number) => string): string {
  let out = '';
  for (let n = from; n <= to; n++) out += gw(n, model?.(n));
  return out;
}

/** /metrics once it answers 200 (after a restore it is held back until caught up) and `ready` holds. */
async function metricsWhen(server: ServeProcess, ready: (text: string) => boolean, what: string): Promise<string> {
  return waitFor(
    async () => {
      const res = await fetch(`${server.url}/metrics`, { signal: AbortSignal.timeout(5_000) });
      const text = await res.text();
      return res.status === 200 && ready(text) ? text : undefined;
    },
    10_000,
    what,
  );
}

function memoryLog() {
  const entries: Record<string, unknown>[] = [];
  return { log: createLogger('debug', (line) => void entries.push(JSON.parse(line) as Record<string, unknown>)), entries };
}

describe('checkpoint file', () => {
  let dir: string;
  beforeEach(() => {
    dir = tempDir('zp-cpfile-');
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** How every checkpoint begins (what tells a checkpoint of ours from another file). */
  const ours = (rest: Record<string, unknown>) => ({ version: 1, savedAt: '2026-11-29T12:00:00.000Z', ...rest });

  it('a crash in the middle of a write leaves the previous checkpoint whole, and its leftover is removed', () => {
    const file = join(dir, 'checkpoint.json');
    const saved = ours({ note: 'the previous checkpoint' });
    writeCheckpointFile(file, saved);
    // A run killed while writing: its temporary file is torn and was never renamed over the checkpoint.
    writeFileSync(join(dir, 'checkpoint.json.tmp-424242'), JSON.stringify(ours({ note: 'the new one' })).slice(0, 17));
    writeFileSync(join(dir, 'checkpoint.json.tmp-7'), ''); // torn before its first byte
    expect(readCheckpointFile(file)).toEqual(saved);
    const { log } = memoryLog();
    loadCheckpoint(file, log); // not a valid checkpoint of this version, but the leftovers go either way
    expect(readdirSync(dir).filter((n) => n.includes('.tmp-'))).toEqual([]);
  });

  it('a file named like a leftover that is not one of ours is left alone', () => {
    const file = join(dir, 'checkpoint.json');
    writeFileSync(join(dir, 'checkpoint.json.tmp-notes'), '{"version":1,"savedAt":"x"}'); // not NAME.tmp-PID
    writeFileSync(join(dir, 'checkpoint.json.tmp-99'), 'my own notes\n'); // NAME.tmp-PID, not a checkpoint's start
    const { log } = memoryLog();
    loadCheckpoint(file, log);
    expect(readdirSync(dir).sort()).toEqual(['checkpoint.json.tmp-99', 'checkpoint.json.tmp-notes']);
  });

  it('a write that fails leaves the previous checkpoint and no temporary file', () => {
    const file = join(dir, 'checkpoint.json');
    writeCheckpointFile(file, ours({ n: 1 }));
    expect(() => writeCheckpointFile(file, { n: 10n })).toThrow(); // BigInt: JSON.stringify throws mid-write
    expect(readCheckpointFile(file)).toEqual(ours({ n: 1 }));
    expect(readdirSync(dir)).toEqual(['checkpoint.json']);
  });

  it('an unusable checkpoint of ours is moved aside, never over a file already there, and the run starts fresh, with an error logged', () => {
    const file = join(dir, 'checkpoint.json');
    const torn = '{"version":1,"savedAt":"2026-11-29T12:00:00.000Z","histogramBo';
    writeFileSync(file, torn);
    const { log, entries } = memoryLog();
    expect(loadCheckpoint(file, log)).toBeUndefined();
    expect(existsSync(file)).toBe(false);
    expect(readFileSync(`${file}.unusable`, 'utf8')).toBe(torn);
    expect(entries.some((e) => e.level === 'error' && String(e.problem).startsWith('not JSON'))).toBe(true);

    writeFileSync(file, JSON.stringify({ version: 99, savedAt: '2026-11-29T12:00:00.000Z' }));
    expect(loadCheckpoint(file, log)).toBeUndefined();
    expect(entries.some((e) => e.level === 'error' && String(e.problem).startsWith('version'))).toBe(true);
    expect(readFileSync(`${file}.unusable`, 'utf8')).toBe(torn); // the first one is kept
    expect(JSON.parse(readFileSync(`${file}.unusable.1`, 'utf8'))).toMatchObject({ version: 99 });
  });

  it('an empty file is no checkpoint yet: nothing to lose, written over', () => {
    const file = join(dir, 'checkpoint.json');
    writeFileSync(file, '');
    const { log, entries } = memoryLog();
    expect(loadCheckpoint(file, log)).toBeUndefined();
    expect(entries.some((e) => e.msg === 'no checkpoint yet; starting fresh')).toBe(true);
    writeCheckpointFile(file, ours({ n: 2 }));
    expect(readCheckpointFile(file)).toEqual(ours({ n: 2 }));
  });
});

describe('serve with a checkpoint', () => {
  let dir: string;
  let log: string;
  let checkpoint: string;
  let server: ServeProcess | undefined;

  beforeEach(() => {
    dir = tempDir('zp-checkpoint-');
    log = join(dir, 'gateway.log');
    checkpoint = join(dir, 'checkpoint.json');
  });
  afterEach(async () => {
    await server?.stop('SIGKILL');
    server = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  function config(yaml: string): string {
    const file = join(dir, `zp-${Math.random().toString(36).slice(2)}.yml`);
    writeFileSync(file, yaml);
    return file;
  }

  const serve = (configFile: string) => startServe([`--config.file=${configFile}`, `--checkpoint.file=${checkpoint}`, '--tail.start-at=start', log]);
  const linesRead = (n: number) => (t: string) => sample(t, `zero_plane_exporter_lines_total{source="${log}"}`) === n;
  const requests = (t: string, model: string) => sample(t, `zero_plane_requests_total{hit="true",status_class="2xx",model="${model}",route="/v1/messages",cohort=""}`);

  it('SIGTERM writes a final checkpoint; a restart goes on exactly, a line half-written at shutdown read whole', async () => {
    const yearly = config(`checkpoint:\n  schedule: "${YEARLY}"\n`);
    const first = lines(1, 10);
    writeFileSync(log, first);
    const half = gw(11);
    appendFileSync(log, half.slice(0, 20));
    server = await serve(yearly);
    await metricsWhen(server, linesRead(10), '10 lines');
    expect(await server.stop('SIGTERM')).toBe(0);
    server = undefined;

    const saved = JSON.parse(readFileSync(checkpoint, 'utf8')) as { files: { followed: Array<{ offset: number; path: string }> } };
    // Just past the last complete line: the half line is read whole after the restart.
    expect(saved.files.followed).toMatchObject([{ path: log, offset: Buffer.byteLength(first) }]);

    appendFileSync(log, half.slice(20) + lines(12, 15));
    server = await serve(yearly);
    expect(server.logs.some((l) => l.msg === 'restored checkpoint' && l.requests === 10)).toBe(true);
    const text = await metricsWhen(server, linesRead(15), '15 lines');
    expect(sample(text, 'zero_plane_exporter_parse_errors_total{reason="invalid_json"}')).toBe(0);
    for (const m of ['m0', 'm1', 'm2']) expect(requests(text, m)).toBe([...Array(15).keys()].filter((i) => (i + 1) % 3 === Number(m[1])).length);
    expect(sample(text, 'zero_plane_request_duration_seconds_count{hit="true",model="m1",route="/v1/messages",cohort=""}')).toBe(5);
  });

  it('different histogram buckets: counters start from zero with a warning, files resume from their offsets', async () => {
    writeFileSync(log, lines(1, 10));
    server = await serve(config(`checkpoint:\n  schedule: "${YEARLY}"\n`));
    await metricsWhen(server, linesRead(10), '10 lines');
    expect(await server.stop('SIGTERM')).toBe(0);

    appendFileSync(log, lines(11, 13));
    server = await serve(config(`checkpoint:\n  schedule: "${YEARLY}"\nmetrics:\n  histogramBuckets: [0.5]\n`));
    expect(server.logs.some((l) => l.level === 'warn' && String(l.msg).startsWith('checkpoint histogram buckets differ'))).toBe(true);
    const text = await metricsWhen(server, linesRead(3), 'the 3 new lines, and only those');
    expect(sample(text, 'zero_plane_request_duration_seconds_count{hit="true",model="m1",route="/v1/messages",cohort=""}')).toBe(1); // line 13
    expect(sample(text, 'zero_plane_request_duration_seconds_bucket{hit="true",model="m1",route="/v1/messages",cohort="",le="0.5"}')).toBe(1);
  });

  it('catch-up cap: a file further behind resumes within the cap of its end, the bytes passed over counted exactly', async () => {
    const cap = 2_000;
    const capped = config(`checkpoint:\n  schedule: "${YEARLY}"\n  maxCatchUpBytes: ${cap}\n`);
    writeFileSync(log, lines(1, 5));
    server = await serve(capped);
    await metricsWhen(server, linesRead(5), '5 lines');
    expect(await server.stop('SIGTERM')).toBe(0);
    const offset = statSync(log).size;

    // Long downtime: far more than the cap written meanwhile.
    const downtime = lines(6, 105);
    appendFileSync(log, downtime);
    const size = statSync(log).size;
    expect(size - offset).toBeGreaterThan(4 * cap);
    // The first line starting at or after size − cap, and the lines from there on.
    const starts: number[] = [];
    for (let at = offset, i = 0; i < 100; i++) {
      starts.push(at);
      at += Buffer.byteLength(gw(6 + i));
    }
    const resumeAt = starts.find((s) => s >= size - cap) as number;
    const kept = starts.filter((s) => s >= resumeAt).length;

    server = await serve(capped);
    const text = await metricsWhen(server, linesRead(5 + kept), `${5 + kept} lines`);
    expect(sample(text, `zero_plane_exporter_skipped_bytes_total{source="${log}",reason="catch_up_cap"}`)).toBe(resumeAt - offset);
    expect(sample(text, 'zero_plane_exporter_parse_errors_total{reason="invalid_json"}')).toBe(0);
  });

  it('a bad schedule exits 2, naming the file, the line and the key', () => {
    const bad = config('sources:\n  pollInterval: 1s\ncheckpoint:\n  schedule: "every 5s"\n');
    const r = runCli(['serve', `--config.file=${bad}`, `--checkpoint.file=${checkpoint}`, log]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${bad}:4: checkpoint.schedule: "every 5s" is not a cron expression`);
    const r2 = runCli(['serve', `--config.file=${config('checkpoint:\n  schedule: "61 * * * * *"\n')}`, log]);
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(/:2: checkpoint\.schedule: .*second: 61 is a invalid expression for second/);
  });

  it('bounded labels map the same after a restart: the 51st distinct model is still __other__', async () => {
    const yearly = config(`checkpoint:\n  schedule: "${YEARLY}"\n`);
    writeFileSync(
      log,
      lines(1, 50, (n) => `model-${n}`),
    );
    server = await serve(yearly);
    await metricsWhen(server, linesRead(50), '50 lines');
    expect(await server.stop('SIGTERM')).toBe(0);

    appendFileSync(log, gw(51, 'model-51') + gw(52, 'model-1') + gw(53, 'model-50'));
    server = await serve(yearly);
    const text = await metricsWhen(server, linesRead(53), '53 lines');
    expect(requests(text, '__other__')).toBe(1);
    expect(requests(text, 'model-51')).toBeUndefined();
    expect(requests(text, 'model-1')).toBe(2);
    expect(requests(text, 'model-50')).toBe(2);
    expect(sample(text, 'zero_plane_exporter_label_overflow_total{label="model",reason="too_many_values"}')).toBe(1);
  });

  it('a checkpoint that cannot be written is logged and counted, never fatal', async () => {
    writeFileSync(log, lines(1, 3));
    const nowhere = join(dir, 'missing-dir', 'checkpoint.json');
    server = await startServe([`--config.file=${config('checkpoint:\n  schedule: "* * * * * *"\n')}`, `--checkpoint.file=${nowhere}`, '--tail.start-at=start', log]);
    const text = await metricsWhen(server, (t) => (sample(t, 'zero_plane_exporter_checkpoint_writes_total{result="error"}') ?? 0) >= 1, 'a failed scheduled write');
    expect(sample(text, 'zero_plane_exporter_checkpoint_writes_total{result="ok"}')).toBe(0);
    expect(sample(text, 'zero_plane_exporter_checkpoint_last_success_timestamp_seconds')).toBeUndefined();
    expect(linesRead(3)(text)).toBe(true);
    expect(server.logs.filter((l) => l.msg === 'checkpoint write failed')).toHaveLength(1); // once per failing streak
    expect(await server.stop('SIGTERM')).toBe(0);
  });
});
