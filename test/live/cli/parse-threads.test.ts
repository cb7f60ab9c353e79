// The parse workers of `serve` (cli/parse-threads.ts) with real worker threads: what a worker read is in the
// serving thread's pipeline by the time it says it caught up, a cut pairs offsets with those counts, and a
// worker that fails is reported (serve stops) and refuses checkpoints instead of serving counts that no
// longer grow.
import { statSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ParseThreads } from '../../../src/cli/parse-threads.js';
import { configSchema } from '../../../src/config/schema.js';
import { Pipeline } from '../../../src/pipeline.js';
import { createLogger } from '../../../src/server/logger.js';
import { tempDir } from '../../helpers/temp-dir.js';

const line = (i: number) =>
  `{"ts":"2026-11-01T00:00:00.000Z","latency_ms":${100 + (i % 50)},"status":200,"model":"m${i % 3}","route":"/v1/messages","response_headers":{"x-anthropic-layer-id":"zero-plane-v1"}}\n`;

describe('parse workers, for real', () => {
  let dir: string | undefined;
  let threads: ParseThreads | undefined;
  afterEach(async () => {
    await threads?.stop();
    threads = undefined;
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    dir = undefined;
  });

  it('counts are in the pipeline when the worker has caught up, and a cut pairs them with the offset', async () => {
    dir = tempDir('zp-threads-');
    const file = join(dir, 'a.log');
    const N = 5_000;
    writeFileSync(file, Array.from({ length: N }, (_, i) => line(i)).join(''));
    const config = configSchema.parse({ sources: { files: [file], startAt: 'start' } });
    const pipeline = new Pipeline(config);
    const failures: Error[] = [];
    threads = new ParseThreads({ config, workers: 1, pipeline, log: createLogger('error', () => {}), held: [], dropped: () => {}, failed: (e) => failures.push(e) });
    await threads.start();
    await threads.caughtUp;
    expect(pipeline.metrics.lines.sum()).toBe(N);
    expect(pipeline.metrics.requests.sum()).toBe(N);
    expect(threads.followedCount).toBe(1);
    const cut = await threads.snapshot((state, held) => ({ state, held, lines: pipeline.metrics.lines.sum() }));
    expect(cut.lines).toBe(N);
    expect(cut.held).toEqual([]);
    expect(cut.state.files.map((f) => [f.path, f.offset])).toEqual([[file, statSync(file).size]]);
    // A fingerprint that crossed threads is a Buffer again (a checkpoint writes it as base64).
    expect(Buffer.isBuffer(cut.state.files[0]?.head)).toBe(true);
    await threads.stop();
    const final = await threads.snapshot((state) => state.files.map((f) => f.offset));
    expect(final).toEqual([statSync(file).size]);
    threads = undefined;
    expect(failures).toEqual([]);
  });

  it('a worker that fails is reported, and no checkpoint is taken after it', async () => {
    dir = tempDir('zp-threads-');
    const failing = join(dir, 'failing-worker.mjs');
    writeFileSync(
      failing,
      [
        "import { parentPort } from 'node:worker_threads';",
        "parentPort.postMessage({ type: 'started', counts: { followed: 1, open: 1, cap: 8, modes: [], watched: 0, fallbacks: 0 } });",
        "setTimeout(() => { throw new Error('disk on fire'); }, 50);",
      ].join('\n'),
    );
    const config = configSchema.parse({ sources: { files: [join(dir, '*.log')] } });
    let reported: Error | undefined;
    const seen = new Promise<Error>((resolve) => {
      threads = new ParseThreads({
        config,
        workers: 1,
        pipeline: new Pipeline(config),
        log: createLogger('error', () => {}),
        held: [],
        dropped: () => {},
        failed: (e) => {
          reported = e;
          resolve(e);
        },
        workerUrl: pathToFileURL(failing),
      });
    });
    await threads?.start();
    expect((await seen).message).toBe('disk on fire');
    expect(reported?.message).toBe('disk on fire');
    await expect(threads?.snapshot(() => 'taken')).rejects.toThrow(/no checkpoint: disk on fire/);
  });

  it('a warning a worker logs comes after what it counted: a scrape after the log line shows the count', async () => {
    dir = tempDir('zp-threads-');
    const missing = join(dir, 'later.log');
    const config = configSchema.parse({ sources: { files: [missing] } });
    const pipeline = new Pipeline(config);
    const errorsAtWarning = new Promise<number>((resolve) => {
      const log = createLogger('warn', (text) => {
        if ((JSON.parse(text) as { msg?: string }).msg === 'source problem; retrying') resolve(pipeline.metrics.sourceErrors.get([missing, 'not_found']));
      });
      // A minute between flushes: only the flush before the warning can bring the count in time.
      threads = new ParseThreads({ config, workers: 1, pipeline, log, held: [], dropped: () => {}, failed: () => {}, flushMs: 60_000 });
    });
    await threads?.start();
    expect(await errorsAtWarning).toBe(1);
  });
});
