// An unreadable log is reported as permission_denied once and read once it becomes readable. Root reads
// everything, so under root (as in CI) the follower runs in a child process as `nobody` via setpriv.
import { spawn } from 'node:child_process';
import { tempDir } from './helpers/temp-dir.js';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { requireBinary } from './helpers/binaries.js';

const FOLLOWER = new URL('../dist/source/file-follower.js', import.meta.url).href;
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
    const child = asRoot
      ? spawn(requireBinary('setpriv'), ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, ...argv])
      : spawn(process.execPath, argv);
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
