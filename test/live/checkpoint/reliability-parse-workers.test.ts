// Parse workers (parse.workers: 2): two logs, one per worker, written by child processes while `serve` is
// killed with SIGKILL and stopped with SIGTERM and restarted from its checkpoint. The checkpoint is a cut
// across both workers, so in the end the counters equal what the two files hold exactly, per file, and no
// counter went down across a restart. The follower gauges add up both workers' files.
import { readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { metricsWhenReady, sample, startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { parseSamples, sumOf, type ParsedSample } from '../../helpers/exposition.js';
import { sleep, startChildWriter, type ChildWriter } from '../../helpers/sequence-log.js';
import { tempDir } from '../../helpers/temp-dir.js';

async function scrape(server: ServeProcess): Promise<{ status: number; text: string }> {
  const res = await fetch(`${server.url}/metrics`, { signal: AbortSignal.timeout(5_000) });
  return { status: res.status, text: await res.text() };
}

/** Lines read per source, from a scrape that answered 200 (after a restore, /metrics is 503 until caught up). */
async function linesBySource(server: ServeProcess): Promise<{ samples: ParsedSample[]; text: string }> {
  const text = await metricsWhenReady(server);
  return { samples: parseSamples(text), text };
}

function linesOf(path: string): number {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '').length;
}

describe('parse workers: a checkpoint is one cut across them', () => {
  let dir: string;
  let server: ServeProcess | undefined;
  const writers: ChildWriter[] = [];

  afterEach(async () => {
    await server?.stop('SIGKILL');
    server = undefined;
    for (const w of writers.splice(0)) if (w.child.exitCode === null) w.child.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  });

  it('two workers, kill -9 and SIGTERM while both files grow: every line of each file counted once, no counter down', async () => {
    dir = tempDir('zp-workers-');
    const a = join(dir, 'a.log');
    const b = join(dir, 'b.log');
    const config = join(dir, 'zp.yml');
    writeConfig(config);
    const args = [`--config.file=${config}`, `--checkpoint.file=${join(dir, 'checkpoint.json')}`, '--tail.start-at=start', '--parse.workers=2', a, b];
    writers.push(await startChildWriter(a, { linesPerMs: 1, format: 'gateway' }), await startChildWriter(b, { linesPerMs: 1, format: 'gateway' }));
    server = await startServe(args);
    const { text: first } = await linesBySource(server);
    expect(sample(first, 'zero_plane_exporter_followed_files')).toBe(2);
    expect(sample(first, 'zero_plane_exporter_open_files')).toBe(2);

    for (const signal of ['SIGKILL', 'SIGTERM', 'SIGKILL'] as const) {
      await waitFor(async () => ((await scrape(server as ServeProcess)).text.match(/checkpoint_writes_total\{result="ok"\} [1-9]/) ? true : undefined), 10_000, 'a checkpoint');
      await sleep(300 + Math.floor(Math.random() * 700));
      const before = (await linesBySource(server)).samples;
      await server.stop(signal);
      server = undefined;
      server = await startServe(args);
      const after = (await linesBySource(server)).samples;
      for (const source of [a, b]) {
        const was = sumOf(before, 'zero_plane_exporter_lines_total', { source });
        expect(sumOf(after, 'zero_plane_exporter_lines_total', { source }), `${source} after ${signal}`).toBeGreaterThanOrEqual(was);
      }
      expect(sumOf(after, 'zero_plane_requests_total')).toBeGreaterThanOrEqual(sumOf(before, 'zero_plane_requests_total'));
    }

    for (const w of writers) await w.stop();
    const want = { [a]: linesOf(a), [b]: linesOf(b) };
    const final = await waitFor(
      async () => {
        const { samples } = await linesBySource(server as ServeProcess);
        return [a, b].every((s) => sumOf(samples, 'zero_plane_exporter_lines_total', { source: s }) >= (want[s] as number)) ? samples : undefined;
      },
      15_000,
      'both files read to their end',
    );
    for (const source of [a, b]) expect(sumOf(final, 'zero_plane_exporter_lines_total', { source })).toBe(want[source]);
    expect(sumOf(final, 'zero_plane_requests_total')).toBe((want[a] as number) + (want[b] as number));
    expect(sumOf(final, 'zero_plane_request_duration_seconds_count')).toBe((want[a] as number) + (want[b] as number));
  }, 90_000);
});

function writeConfig(path: string): void {
  // A checkpoint every second and quick polls: restarts land between many checkpoints and reads.
  writeFileSync(path, 'checkpoint:\n  schedule: "* * * * * *"\nsources:\n  pollInterval: 50ms\n');
}
