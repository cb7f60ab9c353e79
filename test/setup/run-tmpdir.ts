// Global set-up: the whole run writes its temp files under one TMPDIR of its own, and the run fails if
// anything is left there at the end, so a test that forgets to clean up is caught, not piled up in /tmp.
import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const runDir = mkdtempSync(join(tmpdir(), 'zp-test-run-'));
  // Traversable by the unprivileged user some tests run children as (the permission-denied test).
  chmodSync(runDir, 0o755);
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = runDir;
  return () => {
    const left = readdirSync(runDir);
    rmSync(runDir, { recursive: true, force: true });
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    if (left.length > 0) throw new Error(`tests left ${left.length} temp entries behind: ${left.slice(0, 20).join(', ')}`);
  };
}
