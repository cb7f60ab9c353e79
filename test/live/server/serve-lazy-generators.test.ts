// An exporter that is only scraped does not load the pack and dashboard generators (yaml, the Grafana
// SDK: ~12 MiB of serve's RSS); the landing page and its /pack/ and /dashboards/ files load them when
// asked, and serve what `generate` writes. Checked on a real `serve` with a module-resolution hook that
// records every module it resolves.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startServe, type ServeProcess } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const GENERATORS = ['/dist/pack/render-pack.js', '/dist/dashboards/render-dashboards.js', '/@grafana/grafana-foundation-sdk/'];

let serve: ServeProcess | undefined;
afterEach(async () => {
  await serve?.stop();
  serve = undefined;
});

/** `serve` with every resolved module URL appended to `record`, one per line. */
async function serveRecording(dir: string, record: string): Promise<ServeProcess> {
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';\n` +
      `export async function resolve(specifier, context, next) {\n` +
      `  const r = await next(specifier, context);\n` +
      `  appendFileSync(${JSON.stringify(record)}, r.url + '\\n');\n` +
      `  return r;\n` +
      `}\n`,
  );
  const register = join(dir, 'register.mjs');
  writeFileSync(register, `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`);
  writeFileSync(record, '');
  const log = join(dir, 'gateway.ndjson');
  writeFileSync(log, '');
  return startServe([log], 15_000, (argv) => [argv[0] as string, ['--import', pathToFileURL(register).href, ...argv.slice(1)]]);
}

const loaded = (record: string) =>
  readFileSync(record, 'utf8')
    .split('\n')
    .filter((u) => GENERATORS.some((g) => u.includes(g)));

describe('serve loads the pack and dashboard generators only when their files are asked for', () => {
  it('scrapes leave them unloaded; the landing page, /pack/ and /dashboards/ load them and serve their files', async () => {
    const dir = tempDir('zp-lazy-');
    const record = join(dir, 'resolved.txt');
    serve = await serveRecording(dir, record);
    const s = serve;

    const metrics = await fetch(`${s.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain('zero_plane_exporter_lines_total');
    // The hook saw the exporter's own modules, so an empty answer below is not a hook that never ran.
    expect(readFileSync(record, 'utf8')).toContain('/dist/pipeline.js');
    expect(loaded(record)).toEqual([]);

    // Two first requests at once share one rendering.
    const [page, rules] = await Promise.all([fetch(`${s.url}/`), fetch(`${s.url}/pack/zero-plane.rules.yml`)]);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('href="/pack/zero-plane.rules.yml"');
    expect(rules.status).toBe(200);
    expect(await rules.text()).toBe(readFileSync(new URL('../../../alerts/zero-plane.rules.yml', import.meta.url), 'utf8'));
    const index = await (await fetch(`${s.url}/dashboards/`)).text();
    const first = /href="\/dashboards\/([^"]+\.json)"/.exec(index)?.[1];
    expect(first).toBeDefined();
    const dashboard = await fetch(`${s.url}/dashboards/${first as string}`);
    expect(dashboard.status).toBe(200);
    expect(await dashboard.text()).toBe(readFileSync(new URL(`../../../dashboards/${first as string}`, import.meta.url), 'utf8'));
    expect(loaded(record).some((u) => u.endsWith('/dist/pack/render-pack.js'))).toBe(true);
    expect(loaded(record).some((u) => u.endsWith('/dist/dashboards/render-dashboards.js'))).toBe(true);
  }, 30_000);
});
