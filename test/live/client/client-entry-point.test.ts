// `zero-plane-exporter/client` as an application gets it: a dependency in node_modules, imported by name
// (ESM, through package.json `exports`), with types a strict TypeScript consumer compiles against, and
// that reject a wrong option (skipLibCheck as most applications set it: @datadog/sketches-js ships
// declarations that do not check on their own). Runs the built dist/, as users do.
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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

function tsc(file: string, source: string) {
  writeFileSync(join(app, file), source);
  return spawnSync(process.execPath, [TSC, '-p', app], { encoding: 'utf8', cwd: app, timeout: 60_000 });
}

describe('zero-plane-exporter/client', () => {
  it('imports by name from node_modules as ESM', () => {
    const r = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', "const m = await import('zero-plane-exporter/client'); console.log(JSON.stringify(Object.keys(m).sort()))"],
      { cwd: app, encoding: 'utf8', timeout: 20_000 },
    );
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
});
