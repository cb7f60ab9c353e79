// External binaries the tests run for real. Missing one is a failure under CI=true, never a silent skip.
import { spawnSync } from 'node:child_process';

export function requireBinary(name: string): string {
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const path = r.stdout.trim();
  if (r.status === 0 && path) return path;
  throw new Error(`${name} is not installed; .ci/run installs it from Debian (the README's apt line names every package the tests need). Install it with apt-get to run this test.`);
}
