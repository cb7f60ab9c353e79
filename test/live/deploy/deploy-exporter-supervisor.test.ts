// The exporter container's command from gateway-deployment.yaml, run for real: `serve` killed with SIGKILL
// (as an uncaught crash or an OOM of the process would end it) is started again inside the same container
// process, which never exits, so the container stays running and (without a readiness probe) ready, and
// the gateway Pod stays in its Service. The restarted `serve` resumes from its checkpoint with exact counts.
// A config that exits 2 is retried, never ends the container; SIGTERM reaches `serve` and ends the container.
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { defaultConfig } from '../../../src/config/schema.js';
import { renderDeploy } from '../../../src/deploy/render-deploy.js';
import { BIN, sample, waitFor } from '../../helpers/cli-process.js';
import { freePort } from '../../helpers/processes.js';
import { tempDir } from '../../helpers/temp-dir.js';

interface Container {
  name: string;
  command: string[];
  env: { name: string; value?: string }[];
}
const deployment = parseAllDocuments(renderDeploy(defaultConfig()).get('kubernetes/gateway-deployment.yaml') as string)[0]?.toJS() as { spec: { template: { spec: { containers: Container[] } } } };
const exporter = deployment.spec.template.spec.containers.find((c) => c.name === 'zero-plane-exporter') as Container;

const started: ChildProcess[] = [];
afterEach(() => {
  for (const c of started.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

/** Runs the container's command with `args` as its args, `zero-plane-exporter` on PATH being this tree's CLI. */
function runContainer(dir: string, args: string[]): { child: ChildProcess; stderr: () => string; exited: Promise<number | null> } {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  if (!existsSync(join(bin, 'zero-plane-exporter'))) symlinkSync(BIN, join(bin, 'zero-plane-exporter'));
  const env = Object.fromEntries(exporter.env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value as string]));
  expect(env.RESTART_SECONDS).toBe(String(defaultConfig().deploy.kubernetes.exporterRestartSeconds));
  const [cmd, ...cmdArgs] = exporter.command as [string, ...string[]];
  // A one-second pause keeps the test short; the Pod's own value is checked above.
  const child = spawn(cmd, [...cmdArgs, ...args], { env: { PATH: `${bin}:${dirname(process.execPath)}:/usr/bin:/bin`, RESTART_SECONDS: '1' }, stdio: ['ignore', 'ignore', 'pipe'] });
  started.push(child);
  let err = '';
  child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stderr: () => err, exited };
}

/** The pids of `pid`'s children (Linux /proc). */
function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

const alive = (pid: number) => existsSync(`/proc/${pid}`);

describe("the exporter container's supervisor (gateway-deployment.yaml's command)", () => {
  it('serve killed with SIGKILL is started again in the same container process, which keeps running, and resumes with exact counts', async () => {
    const dir = tempDir('zp-supervisor-');
    const log = join(dir, 'llm.jsonl');
    const line = (i: number) => JSON.stringify({ latency_ms: 100 + (i % 7), status: 200, model: 'm', route: '/v1/messages', response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1' } });
    writeFileSync(log, `${Array.from({ length: 100 }, (_, i) => line(i)).join('\n')}\n`);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const container = runContainer(dir, ['--tail.start-at=start', `--checkpoint.file=${join(dir, 'checkpoint.json')}`, `--web.listen-address=127.0.0.1:${port}`, log]);
    const shell = container.child.pid as number;
    const counted = async (n: number) => {
      try {
        return sample(await (await fetch(`${url}/metrics`)).text(), `zero_plane_exporter_lines_total{source="${log}"}`) === n ? true : undefined;
      } catch {
        return undefined;
      }
    };
    await waitFor(() => counted(100), 20_000, '100 lines counted').catch((e: Error) => Promise.reject(new Error(`${e.message}\n${container.stderr()}`)));
    const [serve] = children(shell);
    expect(serve).toBeDefined();
    process.kill(serve as number, 'SIGKILL');
    await waitFor(() => (alive(serve as number) ? undefined : true), 5_000, 'serve gone');
    // The container's process is still there while serve is down: the container is running, so ready.
    expect(alive(shell)).toBe(true);
    expect(container.child.exitCode).toBeNull();
    appendFileSync(log, `${Array.from({ length: 50 }, (_, i) => line(100 + i)).join('\n')}\n`);
    await waitFor(() => counted(150), 20_000, 'the restarted serve counting all 150 lines').catch((e: Error) => Promise.reject(new Error(`${e.message}\n${container.stderr()}`)));
    const [again] = children(shell);
    expect(again).toBeDefined();
    expect(again).not.toBe(serve);
    expect(container.stderr()).toMatch(/serve exited; starting it again in this container.*"code":137/);
    // Nothing counted twice: a second look after the restart still sees 150.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await counted(150)).toBe(true);

    // SIGTERM (the Pod stopping) reaches serve, which writes its last checkpoint; then the container ends, 0.
    container.child.kill('SIGTERM');
    expect(await Promise.race([container.exited, new Promise((resolve) => setTimeout(() => resolve('timeout'), 15_000))])).toBe(0);
    expect(alive(again as number)).toBe(false);
    expect(existsSync(join(dir, 'checkpoint.json'))).toBe(true);
  }, 60_000);

  it('a serve that exits 2 (bad config) is retried every RESTART_SECONDS and never ends the container', async () => {
    const dir = tempDir('zp-supervisor-bad-');
    writeFileSync(join(dir, 'bad.yml'), 'signals:\n  tolerance: lots\n');
    const container = runContainer(dir, [`--config.file=${join(dir, 'bad.yml')}`, '--web.listen-address=127.0.0.1:0']);
    await waitFor(() => ((container.stderr().match(/"code":2,/g) ?? []).length >= 2 ? true : undefined), 20_000, 'two exits with 2').catch((e: Error) => Promise.reject(new Error(`${e.message}\n${container.stderr()}`)));
    expect(container.child.exitCode).toBeNull();
    // serve's own message names the file and the key.
    expect(container.stderr()).toMatch(/bad\.yml.*tolerance/);
    container.child.kill('SIGTERM');
    expect(await Promise.race([container.exited, new Promise((resolve) => setTimeout(() => resolve('timeout'), 15_000))])).toBe(0);
  }, 60_000);
});
