// Every TypeScript block of docs/client.md, as written, in an application that installed this package
// (node_modules links, as the entry-point test does): compiled by a strict TypeScript consumer that also
// checks the libraries' declarations (skipLibCheck: false), then run with the real @anthropic-ai/sdk
// against the simulator (ANTHROPIC_BASE_URL, as the SDK reads it) and a real `serve` with ingest enabled. The only edits are addresses: the docs' exporter host becomes the
// test's serve, the docs' fixed port an ephemeral loopback one.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type RunningSimulator } from '../../../src/simulate/simulator.js';
import { startServe, type ServeProcess } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const blocks = [...readFileSync(join(ROOT, 'docs', 'client.md'), 'utf8').matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string);

let simulator: RunningSimulator;
let exporter: ServeProcess;
let app: string;

beforeAll(async () => {
  simulator = await startSimulator({ seed: 5, fastLatency: { meanMs: 5, jitterMs: 1 }, fallbackLatency: { medianMs: 8, sigma: 0.2, maxMs: 20 } });
  const dir = tempDir('zp-docs-exp-');
  writeFileSync(join(dir, 'zp.yml'), 'ingest:\n  enabled: true\n');
  exporter = await startServe([`--config.file=${join(dir, 'zp.yml')}`]);
  app = tempDir('zp-docs-app-');
  mkdirSync(join(app, 'node_modules', '@types'), { recursive: true });
  mkdirSync(join(app, 'node_modules', '@anthropic-ai'), { recursive: true });
  symlinkSync(ROOT, join(app, 'node_modules', 'zero-plane-exporter'), 'dir');
  symlinkSync(join(ROOT, 'node_modules', '@anthropic-ai', 'sdk'), join(app, 'node_modules', '@anthropic-ai', 'sdk'), 'dir');
  symlinkSync(join(ROOT, 'node_modules', '@types', 'node'), join(app, 'node_modules', '@types', 'node'), 'dir');
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', type: 'module', private: true }));
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2022',
        lib: ['ES2023', 'DOM'],
        types: ['node'],
        strict: true,
        skipLibCheck: false,
        outDir: 'out',
        rootDir: 'src',
      },
      include: ['src'],
    }),
  );
});

afterAll(async () => {
  await exporter?.stop();
  await simulator?.close();
});

async function requestsAtExporter(): Promise<number> {
  const text = await (await fetch(`${exporter.url}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('zero_plane_requests_total{'))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/** Runs a compiled block (asynchronously: the simulator answering it lives in this process's event loop). */
function runBlock(file: string): Promise<{ status: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file], { cwd: app, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ANTHROPIC_BASE_URL: simulator.url, ANTHROPIC_API_KEY: 'sk-test' } });
    let stderr = '';
    // A block that never ends is a failure (a hang at exit is what the docs promise against): killed, reported.
    const guard = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (status, signal) => {
      clearTimeout(guard);
      resolve({ status, signal, stderr });
    });
  });
}

describe('docs/client.md examples', () => {
  it('has TypeScript blocks to run', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(2);
  });

  // skipLibCheck: false (issue 26: the examples build in such a consumer) checks every declaration file
  // reached (the SDK's, Node's, the client's): ~10 CPU-seconds, a minute of wall time on two loaded cores.
  it('compile in a strict consumer (skipLibCheck: false) and run as written against simulate and serve', { timeout: 180_000 }, async () => {
    mkdirSync(join(app, 'src'), { recursive: true });
    blocks.forEach((code, i) => {
      const edited = code.replaceAll('http://zero-plane-exporter:9185', exporter.url).replace(/\.listen\(\d+\)/g, ".listen(0, '127.0.0.1')");
      writeFileSync(join(app, 'src', `block${i}.ts`), edited);
    });
    const built = spawnSync(process.execPath, [TSC, '-p', app], { cwd: app, encoding: 'utf8', timeout: 120_000 });
    expect(built.stdout + built.stderr).toBe('');
    expect(built.status).toBe(0);

    for (let i = 0; i < blocks.length; i++) {
      const before = await requestsAtExporter();
      const ran = await runBlock(join(app, 'out', `block${i}.js`));
      expect({ block: i, status: ran.status, signal: ran.signal, errors: ran.stderr.split('\n').filter((l) => /Error|error:/.test(l)) }).toEqual({ block: i, status: 0, signal: null, errors: [] });
      // A block that sends to the exporter delivered its call's record before its process ended.
      if (blocks[i]?.includes('ingest')) expect(await requestsAtExporter()).toBe(before + 1);
    }
  });
});
