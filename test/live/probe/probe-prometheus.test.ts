// A real Prometheus scraping `serve`'s /probe with the multi-target pattern of docs/probe.md (relabel_configs:
// the target into ?target=, then into instance, the address to the exporter): one series set per target, each
// with the result of its own target (a Zero-Plane simulator, and one whose opted-in requests all fall back),
// and the pack's recording rule over them. /probe itself refuses a target or module the config does not allow.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { startSimulator, type RunningSimulator } from '../../../src/simulate/simulator.js';
import { requireBinary } from '../../helpers/binaries.js';
import { startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { freePort, startDaemon, type Daemon } from '../../helpers/processes.js';
import { tempDir } from '../../helpers/temp-dir.js';

const RULES = new URL('../../../alerts/zero-plane.rules.yml', import.meta.url);

let fast: RunningSimulator;
let falling: RunningSimulator;
let serve: ServeProcess | undefined;
let prometheus: Daemon | undefined;
let promUrl = '';
const dir = tempDir('zp-probe-prom-');

beforeAll(async () => {
  const bin = requireBinary('prometheus');
  fast = await startSimulator({ seed: 1 });
  falling = await startSimulator({ seed: 2, faults: { hitRateDrop: 1 } });
  writeFileSync(join(dir, 'key'), 'sk-ant-test\n');
  const config = join(dir, 'zp.yml');
  writeFileSync(config, stringify({ probe: { minInterval: '1s', modules: { zp: { baseURL: fast.url, allowedTargets: [falling.url], apiKeyFile: join(dir, 'key'), model: 'claude-sonnet' } } } }));
  serve = await startServe([`--config.file=${config}`]);
  const exporter = new URL(serve.url).host;
  const promConfig = join(dir, 'prometheus.yml');
  writeFileSync(
    promConfig,
    stringify({
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      rule_files: [join(dir, 'rules.yml')],
      scrape_configs: [
        {
          job_name: 'zero-plane-probe',
          metrics_path: '/probe',
          params: { module: ['zp'] },
          static_configs: [{ targets: [fast.url, falling.url] }],
          relabel_configs: [
            { source_labels: ['__address__'], target_label: '__param_target' },
            { source_labels: ['__param_target'], target_label: 'instance' },
            { target_label: '__address__', replacement: exporter },
          ],
        },
      ],
    }),
  );
  writeFileSync(join(dir, 'rules.yml'), readFileSync(RULES, 'utf8'));
  const port = await freePort();
  promUrl = `http://127.0.0.1:${port}`;
  prometheus = await startDaemon(bin, [`--config.file=${promConfig}`, `--storage.tsdb.path=${join(dir, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`], `${promUrl}/-/ready`);
}, 60_000);

afterAll(async () => {
  await prometheus?.stop();
  await serve?.stop();
  await fast?.close();
  await falling?.close();
});

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

async function query(expr: string): Promise<Sample[]> {
  const r = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await r.json()) as { data: { result: Sample[] } };
  return body.data.result;
}

/** instance → value of `expr`, once it has a series for both targets. */
async function perTarget(expr: string): Promise<Record<string, string>> {
  return waitFor(
    async () => {
      const rows = await query(expr);
      return rows.length === 2 ? Object.fromEntries(rows.map((r) => [r.metric.instance as string, r.value[1]])) : undefined;
    },
    45_000,
    `two series of ${expr}`,
  ).catch(async (err: unknown) => {
    // What Prometheus made of the targets: the scrape error says why a series is missing.
    const targets = await (await fetch(`${promUrl}/api/v1/targets`)).text();
    throw new Error(`${(err as Error).message}; targets: ${targets}`);
  });
}

describe('Prometheus scraping /probe with multi-target relabelling', () => {
  it('gets one series set per target, each with its own result', async () => {
    expect(await perTarget('zero_plane_probe_layer_hit{job="zero-plane-probe"}')).toEqual({ [fast.url]: '1', [falling.url]: '0' });
    expect(await perTarget('probe_success{job="zero-plane-probe"}')).toEqual({ [fast.url]: '1', [falling.url]: '0' });
    expect(await perTarget('zero_plane_probe_fallback{job="zero-plane-probe"}')).toEqual({ [fast.url]: '0', [falling.url]: '1' });
    expect(await perTarget('probe_http_status_code{job="zero-plane-probe"}')).toEqual({ [fast.url]: '200', [falling.url]: '200' });
    const modes = await query('zero_plane_probe_delay_profile{job="zero-plane-probe"}');
    expect(modes.find((r) => r.metric.instance === fast.url)?.metric).toMatchObject({ mode: 'balanced' });
    const info = await query('zero_plane_probe_info{job="zero-plane-probe"}');
    expect(info.map((r) => r.metric.sdk)).toEqual(['@anthropic-ai/sdk', '@anthropic-ai/sdk']);
    // The pack's rule, evaluated by this Prometheus over the probe series: per job and instance.
    const ratio = await perTarget('zero_plane:probe_fallback:ratio_avg5m');
    expect(ratio[fast.url]).toBe('0');
    expect(ratio[falling.url]).toBe('1');
    // Every scrape is the probe job's only: up is 1 for both targets.
    expect(await perTarget('up{job="zero-plane-probe"}')).toEqual({ [fast.url]: '1', [falling.url]: '1' });
  }, 120_000);

  it('/probe answers the exposition; refuses a target the module may not use, an unknown module and a repeated parameter', async () => {
    const url = serve?.url as string;
    const ok = await fetch(`${url}/probe?module=zp&target=${encodeURIComponent(fast.url)}`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await ok.text();
    expect(text).toMatch(/^probe_success 1$/m);
    expect(text).toMatch(/^zero_plane_probe_layer_hit 1$/m);
    expect(text).toMatch(/^zero_plane_probe_opt_in\{state="valid",defect=""\} 1$/m);
    const elsewhere = await fetch(`${url}/probe?module=zp&target=${encodeURIComponent('https://attacker.example')}`);
    expect(elsewhere.status).toBe(400);
    expect(await elsewhere.text()).toMatch(/its API key would be sent there/);
    expect((await fetch(`${url}/probe?module=nope`)).status).toBe(400);
    expect((await fetch(`${url}/probe?module=zp&module=zp`)).status).toBe(400);
  });
});
