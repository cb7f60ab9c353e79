// --checkpoint.file naming something that is not a checkpoint of ours used to be renamed to FILE.unusable
// and written over (as root, a device file too); a FIFO hung start-up. Now anything at the path that is
// not absent, empty or a checkpoint this exporter wrote is a config error: exit 2, the message names the
// path and what is there, and nothing is moved, truncated or written. A file put there while serving is
// not written over either (the write fails, is counted, and the exporter keeps serving).
import { spawnSync } from 'node:child_process';
import { appendFileSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { requireBinary } from '../../helpers/binaries.js';
import { runCli, sample, startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

/** What a path is, to compare before and after: kind, inode, size, mtime, content or link target. */
function snapshot(path: string): string {
  const st = lstatSync(path);
  const what = st.isFile() ? readFileSync(path, 'utf8') : st.isSymbolicLink() ? readlinkSync(path) : st.isDirectory() ? readdirSync(path).join(',') : '';
  return JSON.stringify({ mode: st.mode, ino: st.ino, size: st.size, mtimeMs: st.mtimeMs, rdev: st.rdev, what });
}

function serveWith(checkpoint: string, dir: string) {
  const log = join(dir, 'gateway.log');
  writeFileSync(log, '');
  return runCli(['serve', '--web.listen-address=127.0.0.1:0', `--checkpoint.file=${checkpoint}`, log]);
}

describe('checkpoint.file that is not ours: exit 2, nothing touched', () => {
  const cases: Array<[string, (dir: string) => string, RegExp]> = [
    [
      "a user's file",
      (dir) => {
        const p = join(dir, 'notes.json');
        writeFileSync(p, '{"name": "my notes", "keep": true}\n');
        return p;
      },
      /exists and is not a checkpoint of zero-plane-exporter \(it begins "\{\\"name\\": \\"my notes/,
    ],
    [
      'a JSON file with a version of its own',
      (dir) => {
        const p = join(dir, 'package.json');
        writeFileSync(p, '{"version":"1.0.0","name":"x"}\n');
        return p;
      },
      /is not a checkpoint of zero-plane-exporter/,
    ],
    [
      'a directory',
      (dir) => {
        const p = join(dir, 'state');
        mkdirSync(p);
        writeFileSync(join(p, 'inside'), 'x');
        return p;
      },
      /is a directory, not a checkpoint file/,
    ],
    [
      'a FIFO (start-up must not hang on it)',
      (dir) => {
        const p = join(dir, 'pipe');
        expect(spawnSync(requireBinary('mkfifo'), [p]).status).toBe(0);
        return p;
      },
      /is a FIFO, not a checkpoint file/,
    ],
    [
      'a symbolic link to a checkpoint-looking file',
      (dir) => {
        const target = join(dir, 'real.json');
        writeFileSync(target, '{"version":1,"savedAt":"2026-11-29T12:00:00.000Z"}');
        const p = join(dir, 'link.json');
        symlinkSync(target, p);
        return p;
      },
      /is a symbolic link/,
    ],
  ];

  it.each(cases)('%s', (_name, make, message) => {
    const dir = tempDir('zp-cp-path-');
    const path = make(dir);
    const before = snapshot(path);
    const names = readdirSync(dir).sort();
    const r = serveWith(path, dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`checkpoint.file: ${path} `);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain('nothing there was changed');
    expect(snapshot(path)).toBe(before);
    expect(readdirSync(dir).sort()).toEqual([...names, 'gateway.log'].sort());
  });

  it('a character device: refused, still the same device', () => {
    // As root, a device node of its own (a copy of /dev/null's numbers) in a scratch directory; otherwise
    // /dev/null itself, which an unprivileged process could not rename anyway.
    const dir = tempDir('zp-cp-dev-');
    let device = '/dev/null';
    if (process.getuid?.() === 0) {
      device = join(dir, 'null-device');
      expect(spawnSync(requireBinary('mknod'), [device, 'c', '1', '3']).status).toBe(0);
    }
    const before = snapshot(device);
    const r = serveWith(device, dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/is a character device, not a checkpoint file/);
    expect(statSync(device).isCharacterDevice()).toBe(true);
    expect(snapshot(device)).toBe(before);
    expect(readdirSync(dir).filter((n) => n.includes('unusable'))).toEqual([]);
  });
});

describe('checkpoint.file replaced by something else while serving', () => {
  let server: ServeProcess | undefined;
  afterEach(async () => {
    await server?.stop('SIGKILL');
    server = undefined;
  });

  it('is not written over: the write fails and is counted, the exporter keeps serving, the file is intact', async () => {
    const dir = tempDir('zp-cp-replaced-');
    const log = join(dir, 'gateway.log');
    const checkpoint = join(dir, 'checkpoint.json');
    const config = join(dir, 'zp.yml');
    writeFileSync(config, 'checkpoint:\n  schedule: "* * * * * *"\n');
    writeFileSync(log, '');
    server = await startServe([`--config.file=${config}`, `--checkpoint.file=${checkpoint}`, '--tail.start-at=start', log]);
    const metrics = async () => (await fetch(`${server!.url}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
    await waitFor(async () => ((sample(await metrics(), 'zero_plane_exporter_checkpoint_writes_total{result="ok"}') ?? 0) >= 1 ? true : undefined), 10_000, 'a first write');
    const mine = '{"mine": "a file of my own, put where the checkpoint was"}\n';
    writeFileSync(`${checkpoint}.new`, mine);
    const { renameSync } = await import('node:fs');
    renameSync(`${checkpoint}.new`, checkpoint);
    appendFileSync(log, '{"latency_ms":180,"status":200}\n');
    const text = await waitFor(
      async () => {
        const t = await metrics();
        // The line has no header, so format detection holds it until it settles (2 s): wait for both.
        const failed = (sample(t, 'zero_plane_exporter_checkpoint_writes_total{result="error"}') ?? 0) >= 1;
        return failed && sample(t, `zero_plane_exporter_lines_total{source="${log}"}`) === 1 ? t : undefined;
      },
      10_000,
      'a failed write, and the line counted',
    );
    expect(sample(text, `zero_plane_exporter_lines_total{source="${log}"}`)).toBe(1);
    expect(server.logs.some((l) => l.msg === 'checkpoint write failed' && String(l.error).includes('is not a checkpoint of zero-plane-exporter'))).toBe(true);
    expect(await server.stop('SIGTERM')).toBe(0);
    server = undefined;
    expect(readFileSync(checkpoint, 'utf8')).toBe(mine);
    expect(readdirSync(dir).sort()).toEqual(['checkpoint.json', 'gateway.log', 'zp.yml']);
  });
});
