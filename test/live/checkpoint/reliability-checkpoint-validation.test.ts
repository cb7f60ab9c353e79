// A checkpoint that passes the schema used to be trusted: a negative counter was served, a mid-line offset
// read the rest of a line as a line. Now every restored value is checked against what its family can
// hold and every offset against the file it names; what fails is logged, counted in
// zero_plane_exporter_checkpoint_dropped_total{reason} and dropped, never served. The rest of the
// checkpoint is restored as usual.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sample, startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const YEARLY = '0 0 0 1 1 *';

function gw(n: number): string {
  return `${JSON.stringify({ latency_ms: 150 + (n % 50), status: 200, model: `m${n % 3}`, route: '/v1/messages', response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1' } })}\n`;
}

function lines(from: number, to: number): string {
  let out = '';
  for (let n = from; n <= to; n++) out += gw(n);
  return out;
}

interface CheckpointJson {
  series: Record<string, Array<[string[], number | string]>>;
  histograms: Record<string, Array<{ labels: string[]; counts: number[]; sum: number; count: number }>>;
  files: { followed: Array<{ offset: number }> };
}

describe('a checkpoint whose values its families cannot hold', () => {
  let server: ServeProcess | undefined;
  afterEach(async () => {
    await server?.stop('SIGKILL');
    server = undefined;
  });

  it('negative and non-finite counters, inconsistent histograms, wrong label counts and a mid-line offset are dropped, counted and never served', async () => {
    const dir = tempDir('zp-cp-valid-');
    const log = join(dir, 'gateway.log');
    const checkpoint = join(dir, 'checkpoint.json');
    const config = join(dir, 'zp.yml');
    writeFileSync(config, `checkpoint:\n  schedule: "${YEARLY}"\n`);
    writeFileSync(log, lines(1, 12));
    const serve = () => startServe([`--config.file=${config}`, `--checkpoint.file=${checkpoint}`, '--tail.start-at=start', log]);
    const metrics = async () => (await fetch(`${server!.url}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
    const requests = (t: string, m: string) => sample(t, `zero_plane_requests_total{hit="true",status_class="2xx",model="${m}",route="/v1/messages",cohort=""}`);
    const durationCount = (t: string, m: string) => sample(t, `zero_plane_request_duration_seconds_count{hit="true",model="${m}",route="/v1/messages",cohort=""}`);

    server = await serve();
    await waitFor(async () => (sample(await metrics(), `zero_plane_exporter_lines_total{source="${log}"}`) === 12 ? true : undefined), 10_000, '12 lines');
    expect(await server.stop('SIGTERM')).toBe(0);
    server = undefined;

    // Edit the checkpoint the way a hand, a bug or an attacker might, keeping it valid JSON of the right shape.
    const json = JSON.parse(readFileSync(checkpoint, 'utf8')) as CheckpointJson;
    const setSeries = (family: string, model: string | undefined, value: number | string) => {
      const row = json.series[family]?.find(([labels]) => model === undefined || labels.includes(model));
      if (row === undefined) throw new Error(`no ${family} series to edit`);
      row[1] = value;
    };
    setSeries('zero_plane_requests_total', 'm0', -5); // negative
    setSeries('zero_plane_exporter_lines_total', undefined, 'INFINITY'); // becomes 1e999: Infinity once parsed
    json.series.zero_plane_requests_total?.push([['true', '2xx'], 3]); // two label values for a family of five
    const hist = json.histograms.zero_plane_request_duration_seconds ?? [];
    const m1 = hist.find((r) => r.labels.includes('m1'));
    const m2 = hist.find((r) => r.labels.includes('m2'));
    if (m1 === undefined || m2 === undefined) throw new Error('no histogram rows to edit');
    m1.count = 1; // fewer than its buckets hold
    m2.counts[0] = -2; // a negative bucket
    // An offset inside line 10 (its first 7 bytes): reading from there would count its tail as a line.
    const line10 = Buffer.byteLength(lines(1, 9));
    const followed = json.files.followed[0];
    if (followed === undefined) throw new Error('no file in the checkpoint');
    followed.offset = line10 + 7;
    writeFileSync(checkpoint, JSON.stringify(json).replace('"INFINITY"', '1e999'));

    appendFileSync(log, lines(13, 15));
    server = await serve();
    // Reading resumes at line 11 (the first line start after the offset): 11..15 are read.
    const text = await waitFor(
      async () => {
        const t = await metrics();
        return durationCount(t, 'm0') !== undefined && sample(t, `zero_plane_exporter_lines_total{source="${log}"}`) === 5 ? t : undefined;
      },
      10_000,
      'the lines after the offset',
    );

    const dropped = (reason: string) => sample(text, `zero_plane_exporter_checkpoint_dropped_total{reason="${reason}"}`);
    expect(dropped('negative')).toBe(1);
    expect(dropped('not_finite')).toBe(1);
    expect(dropped('labels')).toBe(1);
    expect(dropped('histogram')).toBe(2);
    expect(dropped('offset_not_line_start')).toBe(1);
    expect(dropped('file_position')).toBe(0);
    for (const reason of ['negative', 'not_finite', 'labels', 'histogram', 'offset_not_line_start']) {
      expect(server.logs.some((l) => l.level === 'warn' && l.msg === 'checkpoint values dropped, not restored' && l.reason === reason)).toBe(true);
    }

    // Lines 11..15: m2 (11, 14), m0 (12, 15), m1 (13). Dropped series count only what was read after the restart;
    // the others go on from their checkpointed values (lines 1..12: four of each model).
    expect(requests(text, 'm0')).toBe(2); // restored -5 dropped
    expect(requests(text, 'm1')).toBe(4 + 1);
    expect(requests(text, 'm2')).toBe(4 + 2);
    expect(durationCount(text, 'm0')).toBe(4 + 2);
    expect(durationCount(text, 'm1')).toBe(1); // restored row dropped
    expect(durationCount(text, 'm2')).toBe(2); // restored row dropped
    expect(sample(text, 'zero_plane_exporter_parse_errors_total{reason="invalid_json"}')).toBe(0);

    // No counter or histogram sample served is negative or infinite (the +Inf bucket bound is a label, not a value).
    for (const l of text.split('\n')) {
      if (!/^zero_plane_\w*(_total|_bucket|_count|_sum)[{ ]/.test(l)) continue;
      const value = l.slice(l.lastIndexOf(' ') + 1);
      expect([l, Number.isFinite(Number(value)) && Number(value) >= 0]).toEqual([l, true]);
    }
  });

  it('a file entry that is not a position this exporter writes is dropped: the file is followed by --tail.start-at, not read again from its start', async () => {
    const dir = tempDir('zp-cp-valid-file-');
    const log = join(dir, 'gateway.log');
    const checkpoint = join(dir, 'checkpoint.json');
    const config = join(dir, 'zp.yml');
    writeFileSync(config, `checkpoint:\n  schedule: "${YEARLY}"\n`);
    writeFileSync(log, lines(1, 9));
    const serve = (startAt: string) => startServe([`--config.file=${config}`, `--checkpoint.file=${checkpoint}`, `--tail.start-at=${startAt}`, log]);
    const metrics = async () => (await fetch(`${server!.url}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
    const total = (t: string) =>
      ['m0', 'm1', 'm2'].reduce((sum, m) => sum + (sample(t, `zero_plane_requests_total{hit="true",status_class="2xx",model="${m}",route="/v1/messages",cohort=""}`) ?? 0), 0);
    server = await serve('start');
    await waitFor(async () => (total(await metrics()) === 9 ? true : undefined), 10_000, '9 requests');
    expect(await server.stop('SIGTERM')).toBe(0);
    server = undefined;

    const json = JSON.parse(readFileSync(checkpoint, 'utf8')) as { files: { followed: Array<{ fingerprint: string }> } };
    const followed = json.files.followed[0];
    if (followed === undefined) throw new Error('no file in the checkpoint');
    followed.fingerprint = 'not base64!';
    writeFileSync(checkpoint, JSON.stringify(json));
    appendFileSync(log, lines(10, 11)); // written while stopped: with the position gone, these cannot be told from older ones

    server = await serve('end');
    appendFileSync(log, lines(12, 14));
    const text = await waitFor(
      async () => {
        const t = await metrics();
        return total(t) === 9 + 3 ? t : undefined;
      },
      10_000,
      'the 3 lines written after the restart, on top of the 9 restored',
    );
    expect(sample(text, 'zero_plane_exporter_checkpoint_dropped_total{reason="file_position"}')).toBe(1);
    expect(server.logs.some((l) => l.msg === 'checkpoint values dropped, not restored' && l.reason === 'file_position' && l.examples === log)).toBe(true);
  });
});
