// `zero-plane-exporter/client` as an application gets it: a dependency in node_modules, imported by name
// (ESM, through package.json `exports`), with types a strict TypeScript consumer compiles against, and
// that reject a wrong option, also with skipLibCheck: false. The client's runtime and declaration graphs
// reach none of the server side's packages. Runs the built dist/, as users do.
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/temp-dir.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');

let app: string;

/** An application folder with this package (and @types/node) installed as node_modules links. */
beforeAll(() => {
  app = tempDir('zp-client-app-');
  mkdirSync(join(app, 'node_modules', '@types'), { recursive: true });
  symlinkSync(ROOT, join(app, 'node_modules', 'zero-plane-exporter'), 'dir');
  symlinkSync(join(ROOT, 'node_modules', '@types', 'node'), join(app, 'node_modules', '@types', 'node'), 'dir');
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', type: 'module', private: true }));
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', lib: ['ES2023'], types: ['node'], strict: true, noEmit: true, skipLibCheck: true } }),
  );
});

/** The server side's packages; none may be loaded by, or declared in, the client. */
const SERVER_PACKAGES = ['express', '@grafana/grafana-foundation-sdk', 'bcryptjs', 'node-cron', 'yaml', 'uplot', '@lezer/lr', '@prometheus-io/lezer-promql', 'fast-glob'];
/** What the in-process pipeline brings, loaded only for that destination. */
const PIPELINE_PACKAGES = ['zod', '@datadog/sketches-js', 'structured-headers'];

/** The package a node_modules path belongs to ("@scope/name" or "name"), or undefined outside node_modules. */
function packageOf(path: string): string | undefined {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\/(?!.*node_modules\/)/.exec(path);
  return m?.[1];
}

function tsc(file: string, source: string) {
  writeFileSync(join(app, file), source);
  return spawnSync(process.execPath, [TSC, '-p', app], { encoding: 'utf8', cwd: app, timeout: 60_000 });
}

describe('zero-plane-exporter/client', () => {
  it('imports by name from node_modules as ESM', () => {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', "const m = await import('zero-plane-exporter/client'); console.log(JSON.stringify(Object.keys(m).sort()))"], {
      cwd: app,
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual(['ClientOptionsError', 'OptInHeaderError', 'gateClient', 'instrumentFetch', 'metricsHandler', 'metricsText', 'prometheusRegistry']);
  });

  it('type-checks a strict consumer, and its types refuse a wrong option', () => {
    const good = tsc(
      'app.ts',
      `import { createServer } from 'node:http';
import { gateClient, instrumentFetch, metricsHandler, OptInHeaderError, type InstrumentedFetch, type WindowSignals } from 'zero-plane-exporter/client';
const zp: InstrumentedFetch = instrumentFetch(fetch, { optIn: 'repair', to: { ingest: { url: 'http://127.0.0.1:9185', batchRecords: 100 } } });
const gate = gateClient({ url: 'http://127.0.0.1:9185', pollInterval: '5s', failOpen: false });
createServer(metricsHandler(zp, gate));
const allowed: Promise<boolean> = gate.allows('non-core');
const signals: WindowSignals | undefined = zp.signals();
const hitRate: number | null | undefined = signals?.window.hitRate;
const err = new OptInHeaderError('x-anthropic-experimental', 'zero-plane-2024\\u200b', 'invisible_char', 'zero-plane-2024');
export { allowed, hitRate, err };
`,
    );
    expect(good.stdout + good.stderr).toBe('');
    expect(good.status).toBe(0);

    const bad = tsc('app.ts', `import { instrumentFetch } from 'zero-plane-exporter/client';\ninstrumentFetch(fetch, { optIn: 'fix' });\n`);
    expect(bad.status).not.toBe(0);
    expect(bad.stdout).toMatch(/app\.ts\(2,\d+\): error TS2322: Type '"fix"' is not assignable/);
  });

  it('loads none of the server side, and prom-client only when a Registry is asked for', () => {
    // Every module the import loads: ESM ones through a resolve hook, CommonJS ones from require.cache.
    const hook = `export async function resolve(s, c, n) { const r = await n(s, c); process.stdout.write('esm ' + r.url + '\\n'); return r; }`;
    const probe = `import { register, createRequire } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));
const m = await import('zero-plane-exporter/client');
const cjs = () => Object.keys(createRequire(import.meta.url).cache);
console.log('after-import ' + JSON.stringify(cjs()));
m.prometheusRegistry();
console.log('after-registry ' + JSON.stringify(cjs()));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', probe], { cwd: app, encoding: 'utf8', timeout: 30_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const lines = r.stdout.trim().split('\n');
    const esm = lines.filter((l) => l.startsWith('esm ')).map((l) => fileURLToPath(l.slice(4).startsWith('file:') ? l.slice(4) : 'file:///node-builtin'));
    const afterImport = JSON.parse(lines.find((l) => l.startsWith('after-import '))!.slice(13)) as string[];
    const afterRegistry = JSON.parse(lines.find((l) => l.startsWith('after-registry '))!.slice(15)) as string[];
    const loaded = new Set([...esm, ...afterImport].map(packageOf).filter((p) => p !== undefined));
    // The package's export is the bundle (build/bundle-client.mjs): one module and its shared chunk, not dist/'s files one by one.
    const own = esm.filter((f) => f.startsWith(join(ROOT, 'dist')));
    expect(own.map((f) => f.slice(ROOT.length))).toEqual(['dist/client/bundle/index.js', 'dist/client/bundle/chunk-duration.js']);
    // Nor a builtin: the client fetches node:crypto, node:fs… where first used (client/lazy-builtins.ts), as
    // each static builtin import cost ~3 ms of the import.
    expect(lines.filter((l) => l.startsWith('esm node:'))).toEqual([]);
    // No package at all: not the server side's, not zod (the options are checked by hand), not prom-client.
    expect([...loaded].filter((p) => SERVER_PACKAGES.includes(p))).toEqual([]);
    expect([...loaded]).toEqual([]);
    expect(afterRegistry.map(packageOf)).toContain('prom-client');
  });

  it('loads the in-process pipeline only for the in-process destination, and then before its first call returns', () => {
    // Each destination in its own node: the hook's lines come from the loader thread, in no set order with the main thread's.
    const hook = `export async function resolve(s, c, n) { const r = await n(s, c); process.stdout.write('esm ' + r.url + '\\n'); return r; }`;
    const run = (to: string): string[] => {
      const probe = `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hook)}));
const m = await import('zero-plane-exporter/client');
const answer = async () => new Response('{}', { headers: { 'content-type': 'application/json' } });
const zp = m.instrumentFetch(answer, { to: ${to}, warn: () => {} });
await (await zp('http://api.invalid/v1/messages', { method: 'POST', body: '{}' })).text();
console.log('requests ' + (zp.signals()?.window.requests ?? 'none'));
await zp.close();`;
      const r = spawnSync(process.execPath, ['--input-type=module', '-e', probe], { cwd: app, encoding: 'utf8', timeout: 30_000 });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      return r.stdout.trim().split('\n');
    };
    const heavy = (l: string): boolean => l.endsWith('/chunk-in-process-signals.js') || PIPELINE_PACKAGES.some((p) => l.includes(`/node_modules/${p}/`));
    const toFile = run(JSON.stringify({ logFile: join(app, 'calls.log') }));
    expect(toFile).toContain('requests none');
    expect(toFile.filter(heavy)).toEqual([]);
    const inProcess = run("'in-process'");
    expect(inProcess).toContain('requests 1');
    expect(inProcess.some((l) => l.endsWith('/dist/client/bundle/chunk-in-process-signals.js'))).toBe(true);
    expect(PIPELINE_PACKAGES.filter((p) => inProcess.some((l) => l.includes(`/node_modules/${p}/`)))).toEqual(PIPELINE_PACKAGES);
  });

  // Checking every declaration file (zod's, Node's) is ~9 CPU-seconds of type-checking, not a wait: on
  // two shared cores under load that is 35 s of wall time, hence the bound of this one test.
  it('declares nothing of the server side nor DDSketch, and compiles with skipLibCheck: false', { timeout: 120_000 }, () => {
    const entry = join(app, 'strict-consumer.ts');
    writeFileSync(
      entry,
      `import { instrumentFetch, prometheusRegistry, type InstrumentedFetch, type WindowSignals } from 'zero-plane-exporter/client';
const zp: InstrumentedFetch = instrumentFetch(fetch);
const s: WindowSignals | undefined = zp.signals();
export const p0: boolean | undefined = s?.verdicts.p0;
export const registry = prometheusRegistry(zp);
`,
    );
    const program = ts.createProgram([entry], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2022,
      lib: ['lib.es2023.d.ts'],
      types: ['node'],
      typeRoots: [join(app, 'node_modules', '@types')],
      strict: true,
      noEmit: true,
      skipLibCheck: false,
    });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).toEqual([]);
    const files = program.getSourceFiles().map((f) => f.fileName);
    expect(files.some((f) => f.endsWith('dist/client/index.d.ts'))).toBe(true);
    const declared = new Set(files.map(packageOf).filter((p) => p !== undefined));
    expect([...declared].filter((p) => SERVER_PACKAGES.includes(p) || p === '@datadog/sketches-js')).toEqual([]);
    // What the declarations do reach: the Registry's types, and Node's (with the buffer package @types/node's
    // Blob types resolve to here); not zod, nor the exporter's config schema (the options are declared by hand).
    expect([...declared].filter((p) => !['typescript', '@types/node', 'undici-types', 'buffer'].includes(p)).sort()).toEqual(['prom-client']);
    expect(files.filter((f) => f.includes('/dist/config/'))).toEqual([]);
  });
});
