// Lines held while a file's format is detected (Caddy's health probes: no Zero-Plane header, so nothing
// decides yet) are past the checkpointed offset but not in its counters: the checkpoint saves them, and a
// restart offers them again, so they are counted exactly once, with the preset the file's lines show. Real
// `serve` processes, stopped by SIGTERM and killed by SIGKILL right after a checkpoint that holds them, and
// at random moments (seeded) during detection.
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRng } from '../../../src/simulate/random.js';
import { sample, startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { sleep } from '../../helpers/sequence-log.js';
import { tempDir } from '../../helpers/temp-dir.js';

const NOW = Date.UTC(2026, 11, 2, 10);
const probe = (i: number) =>
  JSON.stringify({
    level: 'info',
    ts: (NOW + i) / 1000,
    logger: 'http.log.access.log0',
    msg: 'handled request',
    request: { method: 'GET', uri: '/healthz', headers: { 'User-Agent': ['kube-probe/1.29'] } },
    duration: 0.0004,
    status: 200,
    resp_headers: { 'Content-Type': ['text/plain'] },
  });
const request = (i: number) =>
  JSON.stringify({
    level: 'info',
    ts: (NOW + i) / 1000,
    logger: 'http.log.access.log0',
    msg: 'handled request',
    request: { method: 'POST', uri: '/v1/messages', headers: { 'X-Anthropic-Experimental': ['zero-plane-2024'] } },
    duration: 0.18,
    status: 200,
    resp_headers: { 'X-Anthropic-Layer-Id': ['zero-plane-v1'] },
  });

let serve: ServeProcess | undefined;
afterEach(async () => {
  await serve?.stop('SIGKILL');
  serve = undefined;
});

function setup(): { log: string; checkpoint: string; start: () => Promise<ServeProcess> } {
  const dir = tempDir('zp-held-');
  const log = join(dir, 'caddy.jsonl');
  const checkpoint = join(dir, 'checkpoint.json');
  const config = join(dir, 'zp.yml');
  writeFileSync(log, '');
  writeFileSync(config, 'checkpoint:\n  schedule: "* * * * * *"\n');
  return { log, checkpoint, start: () => startServe([`--config.file=${config}`, `--checkpoint.file=${checkpoint}`, '--tail.start-at=start', log], 20_000) };
}

function heldInCheckpoint(file: string): number {
  if (!existsSync(file)) return 0;
  try {
    const json = JSON.parse(readFileSync(file, 'utf8')) as { held?: { lines: string[] }[] };
    return (json.held ?? []).reduce((n, h) => n + h.lines.length, 0);
  } catch {
    return 0; // being replaced right now
  }
}

async function metrics(s: ServeProcess): Promise<string> {
  return (await fetch(`${s.url}/metrics`)).text();
}

/** After the restart: `requests` more lines, then every line counted once, all Caddy, `requests` hits. */
async function expectExact(s: ServeProcess, log: string, probes: number, requests: number, from: number): Promise<void> {
  appendFileSync(log, Array.from({ length: requests }, (_, i) => `${request(from + i)}\n`).join(''));
  const total = probes + requests;
  const text = await waitFor(
    async () => {
      const t = await metrics(s);
      return (sample(t, `zero_plane_exporter_lines_total{source="${log}"}`) ?? 0) >= total ? t : undefined;
    },
    20_000,
    `${total} lines counted`,
  );
  // Counted exactly once: no more than the log holds, even after another settle.
  await sleep(2_500);
  const after = await metrics(s);
  expect(sample(after, `zero_plane_exporter_lines_total{source="${log}"}`)).toBe(total);
  expect(sample(after, `zero_plane_requests_total{hit="true",status_class="2xx",model="",route="/v1/messages",cohort=""}`)).toBe(requests);
  expect(sample(after, `zero_plane_requests_total{hit="false",status_class="2xx",model="",route="/healthz",cohort=""}`)).toBe(probes);
  expect(sample(after, `zero_plane_exporter_input_info{source="${log}",preset="caddy-json"}`)).toBe(1);
  void text;
}

describe('held lines and the checkpoint agree', () => {
  it.each(['SIGTERM', 'SIGKILL'] as const)(
    '%s right after a checkpoint that holds 20 probe lines: all 20 counted after the restart, once',
    async (signal) => {
      const { log, checkpoint, start } = setup();
      serve = await start();
      appendFileSync(log, Array.from({ length: 20 }, (_, i) => `${probe(i)}\n`).join(''));
      // Held for 2 s (serve's wait for a quiet log) and checkpointed every second: seen held in one of them.
      await waitFor(() => (heldInCheckpoint(checkpoint) === 20 ? true : undefined), 10_000, 'a checkpoint holding the 20 probe lines');
      expect(sample(await metrics(serve), `zero_plane_exporter_lines_total{source="${log}"}`) ?? 0).toBeLessThanOrEqual(20);
      await serve.stop(signal);
      serve = await start();
      await expectExact(serve, log, 20, 10, 20);
      if (signal === 'SIGKILL') expect(serve.logs.some((l) => l.msg === 'lines held for format detection at the checkpoint offered again')).toBe(true);
    },
    90_000,
  );

  it('killed (SIGTERM or SIGKILL) at random moments during detection, restarted: exact (seeded)', async () => {
    const rng = createRng(2312);
    for (let run = 0; run < 3; run++) {
      const { log, start } = setup();
      serve = await start();
      const probes = 5 + Math.floor(rng() * 30);
      const cut = Math.floor(rng() * probes);
      appendFileSync(log, Array.from({ length: cut }, (_, i) => `${probe(i)}\n`).join(''));
      await sleep(Math.floor(rng() * 1500));
      appendFileSync(log, Array.from({ length: probes - cut }, (_, i) => `${probe(cut + i)}\n`).join(''));
      await sleep(Math.floor(rng() * 3000));
      const signal = rng() < 0.5 ? 'SIGTERM' : 'SIGKILL';
      await serve.stop(signal);
      serve = await start();
      await expectExact(serve, log, probes, 5, probes);
      await serve.stop('SIGTERM');
      serve = undefined;
    }
  }, 240_000);
});
