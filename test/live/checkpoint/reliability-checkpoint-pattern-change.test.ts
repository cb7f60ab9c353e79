// Changing the source pattern between runs (a path becomes a glob over the same file) used to restore the
// counters but drop the file's offset, which was keyed by the pattern that found it: 2,100 counted where
// 1,100 was right with start-at=start, the lines written while stopped lost with start-at=end. Offsets are
// now keyed by the file's identity: whichever configured pattern reaches the file resumes it exactly.
import { appendFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sample, startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

function lines(from: number, to: number): string {
  let out = '';
  for (let n = from; n <= to; n++) out += `${JSON.stringify({ latency_ms: 150 + (n % 50), status: 200, model: 'm', route: '/r', response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1' } })}\n`;
  return out;
}

const PATTERNS: Record<string, (dir: string, log: string) => { before: string; after: string }> = {
  'a path that becomes a glob over it': (dir, log) => ({ before: log, after: join(dir, '*.log') }),
  'a glob that becomes the path': (dir, log) => ({ before: join(dir, '*.log'), after: log }),
  'a path that becomes a symlink to it': (dir, log) => {
    const link = join(dir, 'current');
    symlinkSync(log, link);
    return { before: log, after: link };
  },
};

describe.each(['start', 'end'])('the source pattern changed between runs, start-at=%s: the file resumes by identity', (startAt) => {
  let server: ServeProcess | undefined;
  afterEach(async () => {
    await server?.stop('SIGKILL');
    server = undefined;
  });

  // The path-to-glob change both ways; the other changes with start-at=start (the same code path).
  const kinds = startAt === 'start' ? Object.keys(PATTERNS) : ['a path that becomes a glob over it'];
  it.each(kinds)('%s: 1,100 requests counted once each', async (kind) => {
    const dir = tempDir('zp-cp-pattern-');
    const log = join(dir, 'gateway.log');
    const checkpoint = join(dir, 'checkpoint.json');
    const config = join(dir, 'zp.yml');
    writeFileSync(config, 'checkpoint:\n  schedule: "0 0 0 1 1 *"\n');
    const { before, after } = (PATTERNS[kind] as (typeof PATTERNS)[string])(dir, log);
    const serve = (pattern: string) => startServe([`--config.file=${config}`, `--checkpoint.file=${checkpoint}`, `--tail.start-at=${startAt}`, pattern]);
    const metrics = async () => (await fetch(`${server!.url}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
    const requests = (t: string) => sample(t, 'zero_plane_requests_total{hit="true",status_class="2xx",model="m",route="/r",cohort=""}');

    // With start-at=end the first run counts only what is written after it started.
    if (startAt === 'start') writeFileSync(log, lines(1, 1000));
    else writeFileSync(log, lines(-99, 0));
    server = await serve(before);
    if (startAt === 'end') appendFileSync(log, lines(1, 1000));
    await waitFor(async () => (requests(await metrics()) === 1000 ? true : undefined), 10_000, '1,000 requests');
    expect(await server.stop('SIGTERM')).toBe(0);
    server = undefined;

    appendFileSync(log, lines(1001, 1050)); // while stopped
    server = await serve(after);
    appendFileSync(log, lines(1051, 1100));
    const text = await waitFor(
      async () => {
        const t = await metrics();
        return (requests(t) ?? 0) >= 1100 ? t : undefined;
      },
      10_000,
      '1,100 requests',
    );
    // Read once more after the last poll: nothing arrives twice late.
    await new Promise((r) => setTimeout(r, 600));
    expect(requests(await metrics())).toBe(1100);
    expect(requests(text)).toBe(1100);
    expect(server.logs.some((l) => l.msg === 'resuming file')).toBe(true);
  });
});
