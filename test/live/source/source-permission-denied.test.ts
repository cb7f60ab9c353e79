// An unreadable log is reported as permission_denied once and read once it becomes readable; with
// start-at=end, from where it ended when it was first seen (the lines it held at start are skipped, as
// for any file readable at start). Root reads
// everything, so under root (as in CI) the follower runs in a child process as `nobody` via setpriv.
import { spawn } from 'node:child_process';
import { tempDir } from '../../helpers/temp-dir.js';
import { appendFileSync, chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { requireBinary } from '../../helpers/binaries.js';
import { sample, startServe, waitFor, type Launch } from '../../helpers/cli-process.js';

const FOLLOWER = new URL('../../../dist/source/file-follower.js', import.meta.url).href;
const CHILD = `
import { FileFollower } from ${JSON.stringify(FOLLOWER)};
import { createInterface } from 'node:readline';
const out = (o) => process.stdout.write(JSON.stringify(o) + '\\n');
const f = new FileFollower(
  { patterns: [process.argv[1]], maxLineBytes: 4096, startAt: 'start', pollIntervalMs: 3_600_000 },
  { line: (text) => out({ line: text }), oversize() {} },
  { error: (_source, reason) => out({ error: reason }) },
);
await f.start();
out({ polled: 1 });
for await (const _ of createInterface({ input: process.stdin })) break;
await f.pollOnce();
out({ polled: 2 });
await f.stop();
`;

describe('file follower: permission denied', () => {
  it('reports an unreadable file as permission_denied once, and reads it once allowed', async () => {
    const dir = tempDir('zp-perm-');
    chmodSync(dir, 0o755);
    const path = join(dir, 'secret.log');
    writeFileSync(path, '{"seq":1}\n{"seq":2}\n');
    chmodSync(path, 0o000);

    const asRoot = process.getuid?.() === 0;
    const argv = ['--input-type=module', '-e', CHILD, path];
    const child = asRoot ? spawn(requireBinary('setpriv'), ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, ...argv]) : spawn(process.execPath, argv);
    const events: Record<string, unknown>[] = [];
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    try {
      for await (const l of createInterface({ input: child.stdout })) {
        const event = JSON.parse(l) as Record<string, unknown>;
        events.push(event);
        if (event.polled === 1) {
          chmodSync(path, 0o644);
          child.stdin.write('poll\n');
        }
        if (event.polled === 2) break;
      }
    } finally {
      clearTimeout(killer);
      child.kill();
    }
    expect(events).toEqual([{ error: 'permission_denied' }, { polled: 1 }, { line: '{"seq":1}' }, { line: '{"seq":2}' }, { polled: 2 }]);
  });
});

describe('serve: a file unreadable at start, start-at=end', () => {
  it('is read from where it ended when first seen once it becomes readable, not from its start (1,000 old lines not counted)', async () => {
    const dir = tempDir('zp-perm-start-');
    chmodSync(dir, 0o755);
    const locked = join(dir, 'locked.log');
    const open = join(dir, 'open.log');
    const old = (tag: string) => Array.from({ length: 1000 }, (_, i) => `{"latency_ms":${150 + (i % 40)},"status":200,"model":"${tag}-old"}\n`).join('');
    writeFileSync(locked, old('locked'));
    writeFileSync(open, old('open'));
    chmodSync(locked, 0o000);
    chmodSync(open, 0o644);
    const asRoot = process.getuid?.() === 0;
    const launch: Launch | undefined = asRoot ? (argv) => [requireBinary('setpriv'), ['--reuid=65534', '--regid=65534', '--clear-groups', ...argv]] : undefined;
    const server = await startServe(['--tail.start-at=end', `${dir}/*.log`], 10_000, launch);
    try {
      const metrics = async () => (await fetch(`${server.url}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
      await waitFor(
        async () => (sample(await metrics(), `zero_plane_exporter_source_errors_total{source="${dir}/*.log",reason="permission_denied"}`) === 1 ? true : undefined),
        10_000,
        'the permission problem reported',
      );
      chmodSync(locked, 0o644);
      const line = (model: string) => `{"latency_ms":180,"status":200,"model":"${model}","response_headers":{"x-anthropic-layer-id":"zero-plane-v1"}}\n`;
      appendFileSync(locked, line('locked-new').repeat(5));
      appendFileSync(open, line('open-new').repeat(3));
      const text = await waitFor(
        async () => {
          const t = await metrics();
          return sample(t, `zero_plane_exporter_lines_total{source="${dir}/*.log"}`) === 8 ? t : undefined;
        },
        10_000,
        'the 8 new lines',
      );
      const requests = (model: string, hit: boolean) => sample(text, `zero_plane_requests_total{hit="${hit}",status_class="2xx",model="${model}",route="",cohort=""}`);
      expect(requests('locked-new', true)).toBe(5);
      expect(requests('open-new', true)).toBe(3);
      expect(requests('locked-old', false)).toBeUndefined();
      expect(requests('open-old', false)).toBeUndefined();
    } finally {
      await server.stop('SIGKILL');
    }
  });
});
