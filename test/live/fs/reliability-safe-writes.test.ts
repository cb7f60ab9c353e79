// Safe writes (issue 24): every file export --out, generate and the checkpoint write goes through a
// temporary file of its own (O_EXCL | O_NOFOLLOW) renamed over the target (src/fs/safe-write.ts). A link
// planted in the output directory, to a file elsewhere or dangling, is replaced itself: its target is not
// written, not created. A subdirectory that is a link is refused. On a full disk (a real 1 MiB tmpfs,
// mounted for the test) the error names the file and no partial file is left.
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { writeCheckpointFile } from '../../../src/checkpoint/checkpoint-file.js';
import { SafeFileWriter, writeFileSafely, WriteFileError } from '../../../src/fs/safe-write.js';
import { BIN, runCli } from '../../helpers/cli-process.js';
import { heldOutLog, HELD_OUT_START_MS } from '../../helpers/held-out-log.js';
import { tempDir } from '../../helpers/temp-dir.js';

const dir = tempDir('zp-safe-writes-');
const log = join(dir, 'gateway.log');
/** The first --out block of the log (it starts at HELD_OUT_START_MS, on a 2 h boundary). */
const FIRST_BLOCK = `${new Date(HELD_OUT_START_MS).toISOString().replace(/[:]/g, '').replace('.000Z', 'Z')}.om`;
/** 2.5 MB elsewhere, that a link in the output directory points at. */
const PRECIOUS = 'x'.repeat(2_500_000);

beforeAll(() => {
  writeFileSync(log, `${heldOutLog({ rate: 1, phases: [{ minutes: 150, slow: 0, degraded: 0 }] }).lines.join('\n')}\n`);
});

/** No temporary file of a write left in `d` (the helper's are hidden `.NAME.tmp-…`). */
function noTemporaries(d: string): void {
  expect(
    readdirSync(d, { recursive: true })
      .map(String)
      .filter((n) => n.includes('.tmp-')),
  ).toEqual([]);
}

function exportTo(out: string) {
  return spawnSync(process.execPath, [BIN, 'export', '--out', out, log], { encoding: 'utf8', timeout: 60_000 });
}

describe('export --out never writes through a link', () => {
  it("a link to a file elsewhere, planted at a block's name: the file elsewhere is untouched, the block written in its place", () => {
    const out = join(dir, 'out-link');
    const elsewhere = join(dir, 'elsewhere');
    mkdirSync(out);
    mkdirSync(elsewhere);
    const precious = join(elsewhere, 'precious.db');
    writeFileSync(precious, PRECIOUS);
    symlinkSync(precious, join(out, FIRST_BLOCK));
    const r = exportTo(out);
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(precious, 'utf8')).toBe(PRECIOUS);
    const block = join(out, FIRST_BLOCK);
    expect(lstatSync(block).isFile()).toBe(true);
    expect(readFileSync(block, 'utf8')).toMatch(/^# TYPE zero_plane_requests counter[\s\S]*# EOF\n$/);
    noTemporaries(out);
  });

  it("a dangling link planted at a block's name: its target is not created", () => {
    const out = join(dir, 'out-dangling');
    mkdirSync(out);
    const target = join(dir, 'never-created');
    symlinkSync(target, join(out, FIRST_BLOCK));
    const r = exportTo(out);
    expect(r.status, r.stderr).toBe(0);
    expect(existsSync(target)).toBe(false);
    expect(lstatSync(join(out, FIRST_BLOCK)).isFile()).toBe(true);
  });
});

describe('generate never writes through a link', () => {
  it('a link planted at a rules file is replaced, its target untouched; a subdirectory that is a link is refused, naming it', () => {
    const out = join(dir, 'gen');
    const dashboards = join(dir, 'gen-dashboards');
    mkdirSync(out);
    mkdirSync(dashboards);
    const precious = join(dir, 'precious.yml');
    writeFileSync(precious, PRECIOUS);
    symlinkSync(precious, join(out, 'zero-plane.rules.yml'));
    const args = ['generate', '--out', out, `--dashboards.out=${dashboards}`, `--mixin.out=${join(dir, 'gen-mixin')}`, `--deploy.out=${join(dir, 'gen-deploy')}`, '--log.level=warn'];
    const r = runCli(args);
    expect(r.code, r.stderr).toBe(0);
    expect(readFileSync(precious, 'utf8')).toBe(PRECIOUS);
    expect(lstatSync(join(out, 'zero-plane.rules.yml')).isFile()).toBe(true);
    expect(readFileSync(join(out, 'zero-plane.rules.yml'), 'utf8')).toContain('groups:');
    noTemporaries(out);

    // dashboards/provisioning planted as a link to a directory elsewhere.
    const away = join(dir, 'away');
    mkdirSync(away);
    rmSync(join(dashboards, 'provisioning'), { recursive: true, force: true });
    symlinkSync(away, join(dashboards, 'provisioning'));
    const refused = runCli(args);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/cannot write .*gen-dashboards\/provisioning\/.*: .*gen-dashboards\/provisioning is a symbolic link, not a directory of the output/);
    expect(readdirSync(away)).toEqual([]);
  });
});

describe('the checkpoint and the shared helper', () => {
  it("a name planted at the checkpoint's temporary file is not written through: the write fails naming the checkpoint, the link's target untouched", () => {
    const d = join(dir, 'ckpt');
    mkdirSync(d);
    const path = join(d, 'checkpoint.json');
    const precious = join(dir, 'precious-ckpt');
    writeFileSync(precious, PRECIOUS);
    symlinkSync(precious, `${path}.tmp-${process.pid}`);
    expect(() => writeCheckpointFile(path, { version: 1 })).toThrow(/cannot write .*checkpoint\.json: EEXIST/);
    expect(readFileSync(precious, 'utf8')).toBe(PRECIOUS);
    expect(existsSync(path)).toBe(false);
    rmSync(`${path}.tmp-${process.pid}`);
    writeCheckpointFile(path, { version: 1 });
    expect(readFileSync(path, 'utf8')).toBe('{"version":1}');
  });

  it('a directory at the target: WriteFileError naming it, no temporary file left', async () => {
    const d = join(dir, 'dir-target');
    mkdirSync(join(d, 'x.om'), { recursive: true });
    expect(() => writeFileSafely(join(d, 'x.om'), 'a')).toThrow(WriteFileError);
    const w = await SafeFileWriter.open(join(d, 'x.om'));
    await w.write('text');
    await expect(w.commit()).rejects.toThrow(/cannot write .*dir-target\/x\.om: EISDIR/);
    noTemporaries(d);
  });
});

describe('a full disk (a 1 MiB tmpfs)', () => {
  /** Mounts a tmpfs of `size` at a fresh directory, runs `body`, unmounts (also on failure). Root only. */
  function withTinyDisk(size: string, body: (mnt: string) => void): void {
    const mnt = join(dir, `mnt-${size}`);
    mkdirSync(mnt);
    const m = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', mnt], { encoding: 'utf8' });
    // Not skipped: a machine where it cannot mount cannot show the full disk, which this test exists for.
    expect(m.status, `mount -t tmpfs needs root: ${m.stderr}`).toBe(0);
    try {
      body(mnt);
    } finally {
      spawnSync('umount', [mnt]);
    }
  }

  it('export --out: exit 1 naming the block file and ENOSPC; no partial block, no temporary file left', () => {
    withTinyDisk('1m', (mnt) => {
      const r = exportTo(mnt);
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`cannot write ${mnt}/\\d{4}-\\d{2}-\\d{2}T\\d{6}Z\\.om: ENOSPC`));
      // Blocks already written are removed with the failed one: no part of a timeline left as if whole.
      expect(readdirSync(mnt)).toEqual([]);
    });
  });

  it('generate: exit 1 naming the file and ENOSPC; every file left is whole, no temporary file', () => {
    const reference = join(dir, 'gen-reference');
    const args = (d: string) => ['generate', '--out', d, `--dashboards.out=${join(d, 'dashboards')}`, `--mixin.out=${join(d, 'mixin')}`, `--deploy.out=${join(d, 'deploy')}`, '--log.level=warn'];
    expect(runCli(args(reference)).code).toBe(0);
    withTinyDisk('256k', (mnt) => {
      const r = runCli(args(mnt));
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(new RegExp(`cannot write ${mnt}/\\S+: ENOSPC`));
      noTemporaries(mnt);
      const left = readdirSync(mnt, { recursive: true })
        .map(String)
        .filter((n) => lstatSync(join(mnt, n)).isFile());
      expect(left.length).toBeGreaterThan(0);
      for (const n of left) expect(readFileSync(join(mnt, n), 'utf8'), n).toBe(readFileSync(join(reference, n), 'utf8'));
    });
  });
});
