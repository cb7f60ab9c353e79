// `simulate` and `load` as users run them: two processes, a real HTTP round trip per log line, and the
// log they produce read back by `report`.
import { spawn } from 'node:child_process';
import { tempDir } from '../../helpers/temp-dir.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, runCli, waitFor } from '../../helpers/cli-process.js';
import { freePort } from '../../helpers/processes.js';

const children: ReturnType<typeof spawn>[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
});

describe('simulate + load', () => {
  it('load writes one gateway line per round trip to the simulator, and report reads them', async () => {
    const port = await freePort();
    const sim = spawn(process.execPath, [BIN, 'simulate', `--simulate.listen-address=127.0.0.1:${port}`, '--simulate.fast-latency-ms=180', '--seed=3']);
    children.push(sim);
    await waitFor(
      async () => {
        try {
          return (await fetch(`http://127.0.0.1:${port}/-/healthy`)).ok ? true : undefined;
        } catch {
          return undefined;
        }
      },
      10_000,
      'the simulator',
    );

    const out = join(tempDir('zp-load-'), 'gateway.log');
    const load = runCli(['load', `--load.target=http://127.0.0.1:${port}`, '--load.rate=40', `--load.out=${out}`, '--load.duration=2s', '--seed=3']);
    expect(load.code).toBe(0);
    const done = JSON.parse(load.stderr.trim().split('\n').at(-1) as string) as { msg: string; completed: number; errors: number };
    expect(done.msg).toBe('done');
    expect(done.errors).toBe(0);
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    expect(lines.length).toBe(done.completed);
    expect(lines.length).toBeGreaterThan(40); // ~80 at 40/s for 2 s

    const report = JSON.parse(runCli(['report', '--format=json', out]).stdout) as { records: number; hits: number; parseErrors: Record<string, number> };
    expect(report.records).toBe(lines.length);
    expect(Object.values(report.parseErrors).every((n) => n === 0)).toBe(true);
    expect(report.hits / report.records).toBeGreaterThan(0.8);

    sim.kill('SIGTERM');
    const code = await new Promise((resolve) => sim.once('exit', resolve));
    expect(code).toBe(0);
  });

  it('load against a closed port counts errors and still exits 0 at its duration', async () => {
    const port = await freePort();
    const out = join(tempDir('zp-load-'), 'gateway.log');
    const load = runCli(['load', `--load.target=http://127.0.0.1:${port}`, '--load.rate=20', `--load.out=${out}`, '--load.duration=1s']);
    expect(load.code).toBe(0);
    const done = JSON.parse(load.stderr.trim().split('\n').at(-1) as string) as { errors: number };
    expect(done.errors).toBeGreaterThan(5);
    expect(load.stderr.match(/request failed/g)).toHaveLength(1); // reported once, then counted
  });

  it('bad flags exit 2', () => {
    expect(runCli(['simulate', '--simulate.mode=turbo']).code).toBe(2);
    expect(runCli(['load', '--load.rate=-1']).code).toBe(2);
    expect(runCli(['load', '--load.duration=soon']).code).toBe(2);
  });
});
