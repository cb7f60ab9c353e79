// NUL holes: a file truncated under a writer that does not append (Caddy's log file, any copytruncate) is
// written on at the writer's old offset, so it reads as a run of NUL bytes and then the next line. The
// run is skipped and counted (zero_plane_exporter_nul_bytes_skipped_total{source}), and the line after it
// is read: before, it was one invalid_json line, and across a Caddy copytruncate nearly every request after
// it was lost. Here: a file with NUL runs between lines, and a real Caddy in front of the simulator whose
// log is copytruncated twice while `serve` follows it.
import { copyFileSync, existsSync, readFileSync, renameSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { Pipeline } from '../../../src/pipeline.js';
import { buildReport } from '../../../src/report/build-report.js';
import { LineSplitter } from '../../../src/source/line-splitter.js';
import { readInput } from '../../../src/source/read-input.js';
import { startSimulator, type RunningSimulator } from '../../../src/simulate/simulator.js';
import { sample, startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { knownMix, sendMix, truthOf, type MixResponse } from '../../helpers/gateway-mix.js';
import { startCaddy, type Gateway } from '../../helpers/gateways.js';
import { tempDir } from '../../helpers/temp-dir.js';

const GOLDEN = new URL('../../golden/', import.meta.url).pathname;

describe('NUL runs between lines', () => {
  it('are skipped and counted, and every line after them is read', async () => {
    const lines = readFileSync(join(GOLDEN, 'real-caddy.ndjson'), 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    const holes = [4096, 1, 70_000, 3];
    // A hole before the first line, after some lines, one larger than a read chunk, and one at the end
    // before a last line without its newline.
    const parts: Buffer[] = [Buffer.alloc(holes[0]!)];
    lines.forEach((l, i) => {
      parts.push(Buffer.from(i === lines.length - 1 ? l : `${l}\n`));
      if (i === 9) parts.push(Buffer.alloc(holes[1]!));
      if (i === 20) parts.push(Buffer.alloc(holes[2]!));
      if (i === lines.length - 2) parts.push(Buffer.alloc(holes[3]!));
    });
    const log = join(tempDir('zp-nul-'), 'caddy.log');
    writeFileSync(log, Buffer.concat(parts));
    const config = loadConfig(undefined);
    const pipeline = new Pipeline(config, { keepTotals: true });
    await readInput(log, { maxLineBytes: config.input.maxLineBytes }, pipeline);
    pipeline.finish();
    const r = buildReport(pipeline, config) as unknown as { lines: number; records: number; parseErrors: Record<string, number> };
    expect([r.lines, r.records]).toEqual([lines.length, lines.length]);
    expect(Object.values(r.parseErrors).every((n) => n === 0)).toBe(true);
    expect(pipeline.metrics.nulBytes.get([log])).toBe(holes.reduce((a, b) => a + b, 0));
  });

  it("inside a line are content: only a line's start is looked at (one comparison per line)", () => {
    const got: string[] = [];
    let nuls = 0;
    const s = new LineSplitter(1024, { line: (t) => void got.push(t), oversize: () => {}, nulBytes: (_src, n) => void (nuls += n) }, 'x');
    s.push(Buffer.from('\0\0a\0b\n\0'));
    s.push(Buffer.from('\0\0c\n'));
    s.flush();
    expect(got).toEqual(['a\0b', 'c']);
    expect(nuls).toBe(5);
  });
});

describe('a real Caddy log copytruncated while serve follows it', () => {
  let sim: RunningSimulator | undefined;
  let caddy: Gateway | undefined;
  let serve: ServeProcess | undefined;

  afterAll(async () => {
    await serve?.stop();
    await caddy?.stop();
    await sim?.close();
  });

  it('counts every request the client saw, and the NUL bytes of each hole', async () => {
    const dir = tempDir('zp-caddy-nul-');
    sim = await startSimulator({ mode: 'strict', seed: 23 });
    caddy = await startCaddy(dir, new URL(sim.url).host);
    const log = caddy.logPath;
    serve = await startServe([log]);
    const simulator = sim;
    const gateway = caddy;
    const server = serve;
    const lineCount = () =>
      [`${log}.2`, `${log}.1`, log].reduce(
        (n, p) =>
          n +
          (existsSync(p)
            ? readFileSync(p, 'latin1')
                .split('\n')
                .filter((l) => l.replace(/\0/g, '') !== '').length
            : 0),
        0,
      );
    const linesTotal = async () => sample(await (await fetch(`${server.url}/metrics`)).text(), `zero_plane_exporter_lines_total{source="${log}"}`);

    const responses: MixResponse[] = [];
    const mix = knownMix();
    const requests = [...mix, ...mix, ...mix];
    const holes: number[] = [];
    const send = async (part: typeof mix) => {
      responses.push(...(await sendMix(gateway.url, part, (f) => simulator.faults.set(f))));
      // Caddy writes each line after its response.
      await waitFor(() => (lineCount() === responses.length ? true : undefined), 15_000, `${responses.length} lines in the Caddy log`);
    };
    const allRead = () => waitFor(async () => ((await linesTotal()) === responses.length ? true : undefined), 20_000, `${responses.length} lines read by serve`);
    // logrotate's copytruncate (rotate 2): shift the copies, copy, truncate in place. Caddy keeps writing at
    // its own offset, so the file then starts with a hole as long as it was.
    const copytruncate = () => {
      if (existsSync(`${log}.1`)) renameSync(`${log}.1`, `${log}.2`);
      copyFileSync(log, `${log}.1`);
      holes.push(statSync(log).size);
      truncateSync(log, 0);
    };

    await send(mix);
    await allRead();
    copytruncate();
    await send(mix);
    await allRead();
    // The second time, lines serve has not read yet when the file is truncated (serve stopped meanwhile):
    // the file still starts with NULs and grows past the offset read to, yet the truncation is seen and
    // the unread lines are recovered from the copy.
    const pid = server.child.pid as number;
    process.kill(pid, 'SIGSTOP');
    try {
      await send(mix.slice(0, 20));
      copytruncate();
      await send(mix.slice(20));
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await allRead();
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const head = readFileSync(log).subarray(0, 16);
    expect(
      head.every((b) => b === 0),
      'Caddy wrote past a hole after the truncation',
    ).toBe(true);

    const truth = truthOf(requests, responses);
    const total = (name: string) =>
      text
        .split('\n')
        .filter((l) => l.startsWith(`${name}{`))
        .reduce((s, l) => s + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
    expect(total('zero_plane_requests_total')).toBe(truth.requests);
    expect(
      text
        .split('\n')
        .filter((l) => l.startsWith('zero_plane_requests_total{hit="true"'))
        .reduce((s, l) => s + Number(l.slice(l.lastIndexOf(' ') + 1)), 0),
    ).toBe(truth.hits);
    expect(total('zero_plane_degraded_requests_total')).toBe(truth.degradedCount);
    expect(total('zero_plane_exporter_parse_errors_total')).toBe(0);
    // Each hole is read once, from the file's start after the truncation is seen; the lines after it too.
    expect(sample(text, `zero_plane_exporter_nul_bytes_skipped_total{source="${log}"}`)).toBe((holes[0] as number) + (holes[1] as number));
    expect(sample(text, `zero_plane_exporter_file_rotations_total{source="${log}",kind="copytruncate-recovered"}`)).toBe(2);
  }, 120_000);
});
