// The lines the client writes to a file or sends to ingest are read by `report` and `serve` as the default
// preset on evidence, at once, also for calls whose responses carried no Zero-Plane header: the client
// writes each header the signals read, null when absent, so no detection holds them, no "headers not
// logged" warning is given, and they still count as not served by Zero-Plane.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { instrumentFetch } from '../../../src/client/index.js';
import { runCli, sample, startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const body = JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-x', content: [], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 2 } });
const quiet = { warn: (): void => undefined };

/** Answers like an API with no Zero-Plane layer in front (no Zero-Plane header); the exporter's ingest goes through for real. */
const plainFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> =>
  String(input instanceof Request ? input.url : input).includes('/api/v1/ingest') ? fetch(input, init) : new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });

async function calls(f: typeof fetch, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await f('http://api.invalid/v1/messages', { method: 'POST', body: JSON.stringify({ model: 'claude-x', max_tokens: 1, messages: [] }) });
    await res.text();
  }
}

const open: ServeProcess[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((e) => e.stop()));
});

describe("the client's lines, read by the exporter", () => {
  it('report reads a log file of headerless calls on evidence: every call a record, no warning, exit 0', async () => {
    const dir = tempDir('zp-client-own-');
    const log = join(dir, 'calls.log');
    const f = instrumentFetch(plainFetch, { ...quiet, to: { logFile: log } });
    await calls(f, 3);
    await f.close();
    const r = runCli(['report', '--format=json', log]);
    expect(r.stderr).not.toMatch(/structure alone|no header found|carried a wanted response header/);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ lines: 3, records: 3, requests: 3, hits: 0 });
  });

  it('serve counts ingested headerless calls as decided on evidence, not by structure alone', async () => {
    const dir = tempDir('zp-client-own-');
    writeFileSync(join(dir, 'zp.yml'), 'ingest:\n  enabled: true\n');
    const exporter = await startServe([`--config.file=${join(dir, 'zp.yml')}`]);
    open.push(exporter);
    const f = instrumentFetch(plainFetch, { ...quiet, to: { ingest: { url: exporter.url } } });
    await calls(f, 3);
    await f.close();
    expect(f.records()).toMatchObject({ delivered: 3, dropped: 0 });
    const text = await (await fetch(`${exporter.url}/metrics`)).text();
    expect(sample(text, 'zero_plane_requests_total{hit="false",status_class="2xx",model="claude-x",route="/v1/messages",cohort=""}')).toBe(3);
    expect(sample(text, 'zero_plane_exporter_input_decisions_total{source="http",basis="evidence"}')).toBe(1);
    expect(sample(text, 'zero_plane_exporter_input_decisions_total{source="http",basis="signature"}')).toBeUndefined();
    expect(exporter.logs.some((l) => /without a Zero-Plane header/.test(String(l.msg)))).toBe(false);
  });

  it('serve following the log file counts headerless calls at once, with no detection hold', async () => {
    const dir = tempDir('zp-client-own-');
    const log = join(dir, 'calls.log');
    writeFileSync(log, '');
    const exporter = await startServe([log]);
    open.push(exporter);
    const f = instrumentFetch(plainFetch, { ...quiet, to: { logFile: log } });
    await calls(f, 3);
    await f.close();
    const series = 'zero_plane_requests_total{hit="false",status_class="2xx",model="claude-x",route="/v1/messages",cohort=""}';
    const text = await waitFor(
      async () => {
        const t = await (await fetch(`${exporter.url}/metrics`)).text();
        return sample(t, series) === 3 ? t : undefined;
      },
      10_000,
      'the three calls counted',
    );
    expect(text).toMatch(/zero_plane_exporter_input_decisions_total\{source="[^"]*",basis="evidence"\} 1/);
    expect(text).not.toMatch(/basis="signature"/);
  });
});
