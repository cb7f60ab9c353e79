// The production install the Dockerfile describes, done for real without a container: `npm pack`, the
// tarball unpacked into an empty directory with the lockfile, `npm ci --omit=dev --ignore-scripts`, and
// then `report` and `serve` from the result. It proves the package ships everything it needs at run
// time (dist/, static/, the pack) and needs no dev dependency.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBinary } from '../../helpers/binaries.js';
import { runCli, startCommand, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const SAMPLE = join(ROOT, 'examples', 'gateway.ndjson');
const dir = tempDir('zp-package-');
const app = join(dir, 'app');
let installedBin = '';
let serve: ServeProcess | undefined;

beforeAll(() => {
  const npm = requireBinary('npm');
  const tar = requireBinary('tar');
  // --ignore-scripts: dist/ is already built (as in the Dockerfile's build stage, where npm ci built it).
  const packed = JSON.parse(execFileSync(npm, ['pack', '--json', '--ignore-scripts', `--pack-destination=${dir}`], { cwd: ROOT, encoding: 'utf8' })) as { filename: string }[];
  const tarball = join(dir, (packed[0] as { filename: string }).filename);
  execFileSync('mkdir', ['-p', app]);
  execFileSync(tar, ['-xzf', tarball, '--strip-components=1', '-C', app]);
  copyFileSync(join(ROOT, 'package-lock.json'), join(app, 'package-lock.json'));
  execFileSync(npm, ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: app, stdio: ['ignore', 'ignore', 'pipe'], timeout: 240_000 });
  installedBin = join(app, 'bin', 'zero-plane-exporter.js');
}, 300_000);

afterAll(async () => {
  if (serve !== undefined) expect(await serve.stop()).toBe(0);
});

describe('npm pack, then npm ci --omit=dev of the packed files (the Dockerfile\'s runtime stage)', () => {
  it('installs no dev dependency and nothing from the source tree', () => {
    for (const dev of ['typescript', 'vitest', 'kubernetes-models', 'playwright-core']) expect(existsSync(join(app, 'node_modules', dev)), dev).toBe(false);
    for (const shipped of ['dist/cli/main.js', 'static/landing.js', 'alerts/zero-plane.rules.yml', 'deploy/systemd/zero-plane-exporter.service']) expect(existsSync(join(app, shipped)), shipped).toBe(true);
    for (const kept of ['src', 'test', 'bench']) expect(existsSync(join(app, kept)), kept).toBe(false);
  });

  it('`report` from the installed package prints what the source tree prints', () => {
    const installed = spawnSync(process.execPath, [installedBin, 'report', '--format=json', SAMPLE], { encoding: 'utf8', timeout: 30_000, cwd: dir });
    expect(installed.stderr).toBe('');
    expect(installed.status).toBe(0);
    const here = runCli(['report', '--format=json', SAMPLE]);
    expect(JSON.parse(installed.stdout)).toEqual(JSON.parse(here.stdout));
    expect((JSON.parse(installed.stdout) as { requests: number }).requests).toBeGreaterThan(0);
  });

  it('`serve` from the installed package follows a log and serves /metrics, the landing page and its assets', async () => {
    const log = join(dir, 'gateway.log');
    copyFileSync(SAMPLE, log);
    serve = await startCommand('serve', ['--web.listen-address=127.0.0.1:0', '--tail.start-at=start', log], 20_000, { bin: installedBin });
    const lines = readFileSync(SAMPLE, 'utf8').trim().split('\n').length;
    const counted = new RegExp(`^zero_plane_exporter_lines_total\\{source="[^"]+"\\} ${lines}$`, 'm');
    const url = serve.url;
    await waitFor(async () => (counted.test(await (await fetch(`${url}/metrics`)).text()) ? true : undefined), 10_000, `${lines} lines counted`);
    for (const p of ['/', '/assets/landing.js', '/assets/uplot.min.js', '/pack/', '/-/ready']) expect((await fetch(`${serve.url}${p}`)).status, p).toBe(200);
  });
});
