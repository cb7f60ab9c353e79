// Lines wrapped by the container runtime or by syslog read exactly as the bare lines: a CRI-, Docker- and
// syslog-wrapped copy of every gateway fixture under test/golden gives the same report as the fixture itself
// (the whole JSON but `input`, which names the file). CRI lines are cut into P pieces ended by an F line,
// as the kubelet's runtime cuts long lines, and Docker lines into pieces without their `\n`, as the
// json-file driver cuts lines over 16 KiB; here the pieces are small, so every fixture line is cut.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/schema.js';
import { feedLines } from '../../../src/ingest/feed-lines.js';
import { Pipeline } from '../../../src/pipeline.js';
import { buildReport } from '../../../src/report/build-report.js';
import type { Envelope, EnvelopeMode } from '../../../src/source/envelope.js';
import { LineSplitter } from '../../../src/source/line-splitter.js';
import { readInput } from '../../../src/source/read-input.js';
import { BIN, runCli, sample, startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

type Json = Record<string, unknown>;
const GOLDEN = new URL('../../golden/', import.meta.url).pathname;
const TIME = '2026-12-02T10:00:00.123456789Z';

/** A fixture's lines as bytes, terminators as they are (`\r` of a CRLF line stays with the line). */
function rawLines(text: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  let at = 0;
  for (let nl = text.indexOf(0x0a); nl >= 0; nl = text.indexOf(0x0a, at)) {
    lines.push(text.subarray(at, nl));
    at = nl + 1;
  }
  if (at < text.length) lines.push(text.subarray(at));
  return lines;
}

/** Byte pieces of `line`, `size` at most each (a multi-byte character may be cut: CRI cuts bytes). */
function piecesOf(line: Buffer, size: number): Buffer[] {
  if (line.length === 0) return [line];
  const out: Buffer[] = [];
  for (let i = 0; i < line.length; i += size) out.push(line.subarray(i, i + size));
  return out;
}

const WRAP: Record<string, (lines: Buffer[]) => Buffer> = {
  cri: (lines) =>
    Buffer.concat(
      lines.flatMap((line) => {
        const pieces = piecesOf(line, 37);
        return pieces.map((p, i) => Buffer.concat([Buffer.from(`${TIME} stdout ${i === pieces.length - 1 ? 'F' : 'P'} `), p, Buffer.from('\n')]));
      }),
    ),
  docker: (lines) =>
    Buffer.from(
      lines
        .flatMap((line) => {
          // Docker cuts the message's bytes; here whole characters, so each piece is valid JSON text.
          const chars = Array.from(line.toString('utf8'));
          const pieces: string[] = [];
          for (let i = 0; i < Math.max(chars.length, 1); i += 29) pieces.push(chars.slice(i, i + 29).join(''));
          return pieces.map((p, i) => JSON.stringify({ log: i === pieces.length - 1 ? `${p}\n` : p, stream: 'stdout', time: '2026-12-02T10:00:00.1234567Z' }));
        })
        .map((l) => `${l}\n`)
        .join(''),
    ),
  // nginx's `access_log syslog:server=…` (RFC 3164, with PRI), as a syslog receiver writes it unchanged.
  'syslog-3164': (lines) => Buffer.concat(lines.flatMap((l) => [Buffer.from('<190>Dec  2 10:00:00 gw nginx: '), l, Buffer.from('\n')])),
  // HAProxy's rfc3164 without a hostname.
  'syslog-haproxy': (lines) => Buffer.concat(lines.flatMap((l) => [Buffer.from('<134>Dec 12 10:00:00 haproxy[2741]: '), l, Buffer.from('\n')])),
  // RFC 5424 with structured data and a BOM.
  'syslog-5424': (lines) => Buffer.concat(lines.flatMap((l) => [Buffer.from('<134>1 2026-12-02T10:00:00.123Z gw caddy 812 access [meta x="a\\]b"] \ufeff'), l, Buffer.from('\n')])),
  // What rsyslog writes into /var/log/syslog: no PRI; the traditional time, or RFC 3339 (RSYSLOG_FileFormat).
  'rsyslog-traditional': (lines) => Buffer.concat(lines.flatMap((l) => [Buffer.from('Dec  2 10:00:00 gw nginx: '), l, Buffer.from('\n')])),
  'rsyslog-file': (lines) => Buffer.concat(lines.flatMap((l) => [Buffer.from('2026-12-02T10:00:00.123456+00:00 gw caddy[812]: '), l, Buffer.from('\n')])),
};

interface Fixture {
  name: string;
  log: string;
  config: string | undefined;
}

function fixtures(): Fixture[] {
  return readdirSync(GOLDEN)
    .filter((f) => f.endsWith('.ndjson'))
    .sort()
    .map((f) => {
      const name = f.slice(0, -'.ndjson'.length);
      const yml = join(GOLDEN, `${name}.yml`);
      return { name, log: join(GOLDEN, f), config: existsSync(yml) ? yml : undefined };
    });
}

/** `report`, in process: the whole report JSON but `input` (keyed by the file's path). */
async function report(config: Config, log: string): Promise<{ report: Json; envelopes: Envelope[] }> {
  const envelopes: Envelope[] = [];
  const pipeline = new Pipeline(config, { keepTotals: true, envelope: (_s, e) => envelopes.push(e) });
  await readInput(log, { maxLineBytes: config.input.maxLineBytes, envelope: config.input.envelope }, pipeline);
  pipeline.finish();
  const { input, ...rest } = JSON.parse(JSON.stringify(buildReport(pipeline, config))) as Json;
  void input;
  return { report: rest, envelopes };
}

describe('a wrapped copy of every gateway fixture gives the report of the fixture', () => {
  const dir = tempDir('zp-envelopes-');
  const cases = fixtures().flatMap((f) => Object.keys(WRAP).map((how) => [f.name, how, f] as const));

  it.each(cases)('%s wrapped as %s', async (name, how, f) => {
    const config = loadConfig(f.config);
    const bare = await report(config, f.log);
    expect(bare.envelopes).toEqual(['none']);
    // The line limit bounds the line in the file, header included: lines at the limit cannot be wrapped
    // and stay under it. The CRI and Docker pieces here are small, so only syslog's lines cross it.
    if (config.input.maxLineBytes < 1024 && how.includes('syslog')) return;
    const wrapped = join(dir, `${name}.${how}.log`);
    writeFileSync(wrapped, WRAP[how]!(rawLines(readFileSync(f.log))));
    const got = await report(config, wrapped);
    expect(got.envelopes).toEqual([how === 'cri' || how === 'docker' ? how : 'syslog']);
    expect(got.report).toEqual(bare.report);
  });

  it('report on the command line, with no config: the same JSON for the bare and the CRI-wrapped Caddy log', () => {
    const log = join(GOLDEN, 'real-caddy.ndjson');
    const wrapped = join(dir, 'cli.cri.log');
    writeFileSync(wrapped, WRAP.cri!(rawLines(readFileSync(log))));
    const strip = (stdout: string) => {
      const { input, ...rest } = JSON.parse(stdout) as Json;
      return { input: Object.values(input as Json), rest };
    };
    const a = runCli(['report', '--format', 'json', log]);
    const b = runCli(['report', '--format', 'json', wrapped]);
    expect([a.code, b.code], a.stderr + b.stderr).toEqual([0, 0]);
    expect(b.stderr).toBe('');
    expect(strip(b.stdout)).toEqual(strip(a.stdout));
  });
});

describe('report on two threads', () => {
  it('reads a file with pieces whole: the same report as the bare file, whatever the split point', () => {
    const dir = tempDir('zp-envelope-parallel-');
    const log = join(GOLDEN, 'real-nginx.ndjson');
    const run = (file: string) => {
      const r = spawnSync(process.execPath, [BIN, 'report', '--format', 'json', file], { encoding: 'utf8', env: { ...process.env, ZP_REPORT_PARALLEL_MIN_BYTES: '0' }, timeout: 30_000 });
      expect(r.status, r.stderr).toBe(0);
      const { input, stddevSeconds, ...rest } = JSON.parse(r.stdout) as Json;
      void input;
      return { rest, stddevSeconds: stddevSeconds as number };
    };
    const bare = run(log);
    for (const how of ['cri', 'docker', 'syslog-3164']) {
      const wrapped = join(dir, `${how}.log`);
      writeFileSync(wrapped, WRAP[how]!(rawLines(readFileSync(log))));
      const got = run(wrapped);
      expect(got.rest, how).toEqual(bare.rest);
      // σ from moments merged across threads equals the one-pass σ within float rounding.
      expect(got.stddevSeconds).toBeCloseTo(bare.stddevSeconds, 12);
    }
  });
});

describe('input.envelope', () => {
  const dir = tempDir('zp-envelope-config-');
  const line = readFileSync(join(GOLDEN, 'real-caddy.ndjson'), 'utf8').split('\n')[0] as string;

  it('decides per file: a bare file and a CRI file read together are both read right', async () => {
    const config = loadConfig(undefined);
    const pipeline = new Pipeline(config, { keepTotals: true });
    const bare = join(dir, 'bare.log');
    const cri = join(dir, 'cri.log');
    writeFileSync(bare, `${line}\n${line}\n`);
    writeFileSync(cri, `${TIME} stdout F ${line}\n${TIME} stderr F ${line}\n`);
    for (const f of [bare, cri, bare]) await readInput(f, { maxLineBytes: config.input.maxLineBytes, envelope: 'auto' }, pipeline, 'one-source');
    pipeline.finish();
    const r = buildReport(pipeline, config) as unknown as { lines: number; records: number };
    expect([r.lines, r.records]).toEqual([6, 6]);
  });

  it('`none` reads the wrapped line as it is (not JSON), an explicit envelope unwraps from the first line on', async () => {
    const cri = join(dir, 'cri2.log');
    writeFileSync(cri, `not a line of any envelope\n${TIME} stdout P ${line.slice(0, 50)}\n${TIME} stdout F ${line.slice(50)}\n`);
    const read = async (envelope: EnvelopeMode) => {
      const config = loadConfig(undefined);
      const r = (await report({ ...config, input: { ...config.input, envelope } }, cri)).report as { lines: number; records: number; parseErrors: Record<string, number> };
      return [r.lines, r.records, r.parseErrors.invalid_json];
    };
    expect(await read('none')).toEqual([3, 0, 3]);
    expect(await read('cri')).toEqual([2, 1, 1]);
    expect(await read('auto')).toEqual([2, 1, 1]);
    expect(await read('docker')).toEqual([3, 0, 3]);
  });

  it('with `none`, wrapped lines still get a hint that names the envelope to set', () => {
    const log = join(GOLDEN, 'real-haproxy.ndjson');
    const cfg = join(dir, 'none.yml');
    writeFileSync(cfg, 'input:\n  envelope: none\n');
    for (const [how, envelope] of [
      ['cri', 'cri'],
      ['docker', 'docker'],
      ['syslog-haproxy', 'syslog'],
      ['rsyslog-traditional', 'syslog'],
    ] as const) {
      const wrapped = join(dir, `hint.${how}.log`);
      writeFileSync(wrapped, WRAP[how]!(rawLines(readFileSync(log))));
      const r = runCli(['report', '--config.file', cfg, wrapped]);
      expect(r.code, how).toBe(1);
      expect(r.stderr, how).toContain(`set input.envelope: ${envelope}`);
    }
  });

  it('a bad value exits 2 naming the file and the key', () => {
    const cfg = join(dir, 'bad.yml');
    writeFileSync(cfg, 'input:\n  envelope: journald\n');
    const r = runCli(['report', '--config.file', cfg, cfg]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('bad.yml');
    expect(r.stderr).toContain('input.envelope');
  });

  it('each ingest body is decided on its own', () => {
    const config = loadConfig(undefined);
    const pipeline = new Pipeline(config);
    const opts = { maxLineBytes: 4096, envelope: 'auto' as const, source: 'http', recordSeparators: false };
    expect(feedLines(pipeline, [Buffer.from(`${TIME} stdout F ${line}\n`)], opts).accepted).toBe(1);
    expect(feedLines(pipeline, [Buffer.from(`${JSON.stringify({ log: `${line}\n`, stream: 'stderr', time: TIME })}\n`)], opts).accepted).toBe(1);
    expect(feedLines(pipeline, [Buffer.from(`${line}\n`)], opts).accepted).toBe(1);
  });
});

describe('serve', () => {
  let serve: ServeProcess | undefined;
  afterAll(async () => {
    await serve?.stop();
  });

  it('decides per followed file and per generation: a glob over a bare and a CRI file, the CRI file rotated into a bare one', async () => {
    const dir = tempDir('zp-envelope-serve-');
    const line = readFileSync(join(GOLDEN, 'real-caddy.ndjson'), 'utf8').split('\n')[0] as string;
    const pattern = join(dir, '*.log');
    serve = await startServe([pattern]);
    const server = serve;
    writeFileSync(join(dir, 'a.log'), `${line}\n${line}\n`);
    writeFileSync(join(dir, 'b.log'), `${TIME} stdout P ${line.slice(0, 40)}\n${TIME} stdout F ${line.slice(40)}\n${TIME} stderr F ${line}\n`);
    const metrics = async () => (await fetch(`${server.url}/metrics`)).text();
    const requests = async () => sample(await metrics(), `zero_plane_exporter_lines_total{source="${pattern}"}`);
    await waitFor(async () => ((await requests()) === 4 ? true : undefined), 15_000, '4 lines read');
    // logrotate `create`: the CRI file renamed away, a bare one in its place.
    renameSync(join(dir, 'b.log'), join(dir, 'b.log.1'));
    writeFileSync(join(dir, 'b.log'), `${line}\n`);
    await waitFor(async () => ((await requests()) === 5 ? true : undefined), 15_000, '5 lines read');
    const text = await metrics();
    expect(sample(text, `zero_plane_exporter_input_envelope_info{source="${pattern}",envelope="cri"}`)).toBe(1);
    expect(sample(text, `zero_plane_exporter_input_envelope_info{source="${pattern}",envelope="none"}`)).toBe(1);
    expect(sample(text, 'zero_plane_exporter_parse_errors_total{reason="invalid_json"}')).toBe(0);
    expect(
      text
        .split('\n')
        .filter((l) => l.startsWith('zero_plane_requests_total{'))
        .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0),
    ).toBe(5);
    expect(serve.logs.filter((l) => l.msg === 'input envelope').map((l) => l.envelope)).toEqual(['cri']);
  }, 60_000);
});

describe('a checkpoint while pieces of a line are held', () => {
  let serve: ServeProcess | undefined;
  afterAll(async () => {
    await serve?.stop('SIGKILL');
  });

  it('goes back to the first piece: after SIGTERM and a restart, the line is read whole, once', async () => {
    const dir = tempDir('zp-envelope-checkpoint-');
    const log = join(dir, 'container.log');
    const checkpoint = join(dir, 'checkpoint.json');
    const cfg = join(dir, 'zp.yml');
    writeFileSync(cfg, 'checkpoint:\n  schedule: "0 0 0 1 1 *"\n');
    const line = readFileSync(join(GOLDEN, 'real-caddy.ndjson'), 'utf8').split('\n')[0] as string;
    const full = `${TIME} stdout F ${line}\n`;
    const pieces = `${TIME} stdout P ${line.slice(0, 60)}\n${TIME} stdout P ${line.slice(60, 120)}\n`;
    writeFileSync(log, full + full + pieces);
    const args = [`--config.file=${cfg}`, `--checkpoint.file=${checkpoint}`, '--tail.start-at=start', log];
    const linesRead = async (s: ServeProcess) => {
      const res = await fetch(`${s.url}/metrics`);
      return res.status === 200 ? sample(await res.text(), `zero_plane_exporter_lines_total{source="${log}"}`) : undefined;
    };
    serve = await startServe(args);
    const first = serve;
    await waitFor(async () => ((await linesRead(first)) === 2 ? true : undefined), 15_000, '2 lines');
    expect(await serve.stop('SIGTERM')).toBe(0);
    const saved = JSON.parse(readFileSync(checkpoint, 'utf8')) as { files: { followed: Array<{ offset: number }> } };
    expect(saved.files.followed).toMatchObject([{ offset: Buffer.byteLength(full + full) }]);

    writeFileSync(log, `${full}${full}${pieces}${TIME} stdout F ${line.slice(120)}\n${full}`);
    serve = await startServe(args);
    const second = serve;
    await waitFor(async () => ((await linesRead(second)) === 4 ? true : undefined), 15_000, '4 lines');
    const text = await (await fetch(`${second.url}/metrics`)).text();
    expect(sample(text, 'zero_plane_exporter_parse_errors_total{reason="invalid_json"}')).toBe(0);
    expect(
      text
        .split('\n')
        .filter((l) => l.startsWith('zero_plane_requests_total{'))
        .reduce((n, l) => n + Number(l.slice(l.lastIndexOf(' ') + 1)), 0),
    ).toBe(4);
  }, 60_000);
});

describe('pieces of a line held by the envelope', () => {
  const sinkOf = (lines: string[], oversize: string[] = []) => ({
    line: (t: string) => lines.push(t),
    lineBytes: (b: Buffer, s: number, e: number) => lines.push(b.toString('utf8', s, e)),
    oversize: (src: string) => oversize.push(src),
  });

  it('count as pending bytes, so a checkpoint goes back to the first piece, and per stream', () => {
    const lines: string[] = [];
    const s = new LineSplitter(1024, sinkOf(lines), 'x', undefined, 'cri');
    const p1 = `${TIME} stdout P {"a":`;
    const e1 = `${TIME} stderr F err line`;
    const p2 = `${TIME} stdout P 1,`;
    s.push(Buffer.from(`${p1}\n${e1}\n${p2}\n`));
    expect(lines).toEqual(['err line']);
    expect(s.pendingBytes).toBe(p1.length + 1 + e1.length + 1 + p2.length + 1);
    s.push(Buffer.from(`${TIME} stdout F "b":2}\n`));
    expect(lines).toEqual(['err line', '{"a":1,"b":2}']);
    expect(s.pendingBytes).toBe(0);
  });

  it('a joined line over the limit is too long once, and the next line is read', () => {
    const lines: string[] = [];
    const over: string[] = [];
    const s = new LineSplitter(300, sinkOf(lines, over), 'x', undefined, 'cri');
    const piece = 'y'.repeat(200);
    s.push(Buffer.from(`${TIME} stdout P ${piece}\n${TIME} stdout P ${piece}\n${TIME} stdout F ${piece}\n${TIME} stdout F ok\n`));
    expect(over).toEqual(['x']);
    expect(lines).toEqual(['ok']);
  });

  it('an unended line is handed on at the end of the file', () => {
    const lines: string[] = [];
    const s = new LineSplitter(1024, sinkOf(lines), 'x', undefined, 'docker');
    s.push(Buffer.from(`${JSON.stringify({ log: '{"a":', stream: 'stdout', time: TIME })}\n`));
    expect(lines).toEqual([]);
    s.flush();
    expect(lines).toEqual(['{"a":']);
  });
});
