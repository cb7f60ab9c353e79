// Every matched file used to stay open: with `ulimit -n 1024` and 1,500 matching files the process stayed
// up, but opens failed (files never read) and the HTTP port stopped accepting scrapes. Followed files
// are now held open under a cap (sources.maxOpenFiles, lowered to leave 128 descriptors below the
// process limit); the least recently active are closed and reopened by identity when the poll's stat
// shows they changed. Here the real CLI runs under a lowered limit in a child process.
import { appendFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sample, startServe, waitFor, withDescriptorLimit, type ServeProcess } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const FILES = 1_500;

function gw(file: number, n: number): string {
  return `${JSON.stringify({ latency_ms: 150 + (n % 50), status: 200, model: `m${file % 3}`, route: '/v1/messages', response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1' } })}\n`;
}

function lines(file: number, from: number, to: number): string {
  let out = '';
  for (let n = from; n <= to; n++) out += gw(file, n);
  return out;
}

const name = (i: number) => `f-${String(i).padStart(4, '0')}.log`;

/** Descriptors of a process, and those among them open on files under `dir` (Linux /proc). */
function descriptors(pid: number, dir: string): { total: number; inDir: number } {
  let total = 0;
  let inDir = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      total++;
      if (target.startsWith(`${dir}/`)) inDir++;
    } catch {
      // closed while listing
    }
  }
  return { total, inDir };
}

/** A scrape that must answer 200; a hung or refused port fails the test (the bound is not a measurement). */
async function scrape(server: ServeProcess, path = '/metrics'): Promise<string> {
  const res = await fetch(`${server.url}${path}`, { signal: AbortSignal.timeout(10_000) });
  expect(res.status).toBe(200);
  return res.text();
}

describe('many files: descriptors are bounded', () => {
  let server: ServeProcess | undefined;
  afterEach(async () => {
    await server?.stop('SIGKILL');
    server = undefined;
  });

  it.each([
    ['ulimit -n 1024, the default cap (lowered to 896)', 1024, undefined, 1024 - 128],
    ['ulimit -n 1024, sources.maxOpenFiles: 100', 1024, 100, 100],
  ] as const)(
    '1,500 files, %s: read whole, counts exact, /metrics answers, descriptors within the cap',
    async (_name, limit, maxOpenFiles, cap) => {
      const dir = tempDir('zp-many-');
      const logs = join(dir, 'logs');
      const { mkdirSync } = await import('node:fs');
      mkdirSync(logs);
      for (let i = 0; i < FILES; i++) writeFileSync(join(logs, name(i)), lines(i, 1, 10));
      const config = join(dir, 'zp.yml');
      writeFileSync(config, `sources:\n  files: ["${logs}/*.log"]\n  startAt: start\n${maxOpenFiles === undefined ? '' : `  maxOpenFiles: ${maxOpenFiles}\n`}`);
      const source = `${logs}/*.log`;
      server = await startServe([`--config.file=${config}`], 30_000, withDescriptorLimit(limit));
      const pid = server.child.pid as number;
      expect(server.logs.find((l) => l.msg === 'serving')?.maxOpenFiles).toBe(cap);

      let peakInDir = 0;
      let peakTotal = 0;
      const watch = () => {
        const d = descriptors(pid, logs);
        peakInDir = Math.max(peakInDir, d.inDir);
        peakTotal = Math.max(peakTotal, d.total);
      };
      const linesRead = (n: number) => async () => {
        watch();
        const text = await scrape(server as ServeProcess);
        return sample(text, `zero_plane_exporter_lines_total{source="${source}"}`) === n ? text : undefined;
      };
      let text = await waitFor(linesRead(FILES * 10), 60_000, `${FILES * 10} lines`);
      expect(sample(text, 'zero_plane_exporter_followed_files')).toBe(FILES);
      expect(sample(text, 'zero_plane_exporter_open_files_limit')).toBe(cap);
      expect(sample(text, 'zero_plane_exporter_open_files')).toBeLessThanOrEqual(cap);
      // One directory, watched (sources.watch auto on a local filesystem): no reason to poll it.
      expect(sample(text, 'zero_plane_exporter_watched_directories')).toBe(1);
      expect(sample(text, 'zero_plane_exporter_polled_directories{reason="watch_limit"}')).toBe(0);

      // Files closed for the cap are reopened when they grow: two more lines in every one of them.
      for (let i = 0; i < FILES; i++) appendFileSync(join(logs, name(i)), lines(i, 11, 12));
      text = await waitFor(linesRead(FILES * 12), 60_000, `${FILES * 12} lines`);
      for (const m of [0, 1, 2]) {
        const files = Array.from({ length: FILES }, (_, i) => i).filter((i) => i % 3 === m).length;
        expect(sample(text, `zero_plane_requests_total{hit="true",status_class="2xx",model="m${m}",route="/v1/messages",cohort=""}`)).toBe(files * 12);
      }
      expect(sample(text, 'zero_plane_exporter_parse_errors_total{reason="invalid_json"}')).toBe(0);
      expect(sample(text, `zero_plane_exporter_source_errors_total{source="${source}",reason="read_error"}`)).toBeUndefined();
      await scrape(server, '/-/healthy');
      watch();
      expect(peakInDir).toBeLessThanOrEqual(cap);
      expect(peakInDir).toBeGreaterThan(0);
      expect(peakTotal).toBeLessThan(limit);
    },
    150_000,
  );
});
