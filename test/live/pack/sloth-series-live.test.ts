// Sloth users see this project's SLOs: one real exporter follows a gateway log with bad requests for both
// SLOs, a real Prometheus evaluates the generated pack (short windows so it runs in seconds), and each
// query Sloth's UI sends (fixtures/sloth-ui-queries.yml, copied from Sloth's repository) returns data for
// both SLOs, with the numbers Sloth's series mean: the SLI is the bad share of the log, the burn rate
// that share over the budget, the period in days.
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseConfig } from '../../../src/config/load.js';
import { renderPack } from '../../../src/pack/render-pack.js';
import { requireBinary } from '../../helpers/binaries.js';
import { startServe, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { startPrometheus, type Daemon } from '../../helpers/processes.js';
import { tempDir } from '../../helpers/temp-dir.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/sloth-ui-queries.yml', import.meta.url));
const queries = parse(readFileSync(FIXTURE, 'utf8')) as { instant: { source: string; query: string }[]; range: { source: string; query: string }[] };

/**
 * A 1 h period, windows of seconds and a 4 s budget step, so every window (and the budget, counted from
 * the first step boundary) has data within the test; one burn pair each.
 */
const PACK = parseConfig(
  [
    'pack:',
    '  evaluationInterval: 1s',
    'alerts:',
    '  minRequests: 20',
    'slos:',
    '  period: 1h',
    // Four 1 s scrapes a step: increase() over the step needs two samples in it. With a 2 s step a late or
    // failed scrape leaves one, and that evaluation records nothing (the likely cause of the period's series
    // missing for a minute in one full run, 2026-12-03).
    '  budgetStep: 4s',
    '  page: [{ budgetShare: 0.02, long: 30s, short: 10s }]',
    '  ticket: [{ budgetShare: 0.1, long: 60s, short: 20s }]',
    '',
  ].join('\n'),
  'sloth-live.yml',
);
const IDS = ['zero-plane-hit-rate', 'zero-plane-latency'];

/** 20 requests a batch: 2 fall back (hit-rate bad), 3 of the 18 Zero-Plane ones slower than the ceiling (latency bad). */
function batch(): string {
  let out = '';
  for (let i = 0; i < 20; i++) {
    const hit = i >= 2;
    const headers: Record<string, string> = { 'x-anthropic-delay-profile': 'warmup=hit' };
    if (hit) headers['x-anthropic-layer-id'] = 'zero-plane-v1';
    out += `${JSON.stringify({ ts: Date.now() / 1000, latency_ms: hit && i < 5 ? 250 : 180, status: 200, model: 'm', route: '/v1/messages', response_headers: headers })}\n`;
  }
  return out;
}

let dir: string;
let exporter: ServeProcess | undefined;
let prometheus: Daemon | undefined;
let promUrl: string;
let writer: NodeJS.Timeout | undefined;

type Sample = { metric: Record<string, string>; value?: [number, string]; values?: [number, string][] };

async function api(path: string, params: Record<string, string>): Promise<Sample[]> {
  const res = await fetch(`${promUrl}/api/v1/${path}?${new URLSearchParams(params).toString()}`, { signal: AbortSignal.timeout(5_000) });
  const body = (await res.json()) as { status: string; error?: string; data: { result: Sample[] } };
  if (body.status !== 'success') throw new Error(`${params.query}: ${body.error}`);
  return body.data.result;
}

/** An instant query's result once it has a series for every SLO. */
const forEverySlo = (query: string) =>
  waitFor(
    async () => {
      const r = await api('query', { query });
      return IDS.every((id) => r.some((s) => s.metric.sloth_id === id)) ? r : undefined;
    },
    30_000,
    `${query} for ${IDS.join(' and ')}`,
  ).catch(async (err: unknown) => {
    throw new Error(`${String(err)}; ${await ruleState()}`);
  });

/**
 * What Prometheus says of the rules when a series never came (once seen in a full run, not reproduced
 * alone): the rules not healthy, with their last error, and which SLOs have the period's SLI and burn rate.
 */
async function ruleState(): Promise<string> {
  type Rules = { data: { groups: { name: string; rules: { name: string; health: string; lastError?: string }[] }[] } };
  const rules = (await (await fetch(`${promUrl}/api/v1/rules`, { signal: AbortSignal.timeout(5_000) })).json()) as Rules;
  const unhealthy = rules.data.groups.flatMap((g) => g.rules.filter((r) => r.health !== 'ok').map((r) => `${g.name}/${r.name}: ${r.health} ${r.lastError ?? ''}`));
  const ids = async (name: string) => (await api('query', { query: `count by (sloth_id) (${name})` })).map((s) => s.metric.sloth_id);
  return `rules not ok: ${JSON.stringify(unhealthy)}; slo:sli_error:ratio_rate1h for ${JSON.stringify(await ids('slo:sli_error:ratio_rate1h'))}, slo:period_burn_rate:ratio for ${JSON.stringify(await ids('slo:period_burn_rate:ratio'))}`;
}

beforeAll(async () => {
  const promBin = requireBinary('prometheus');
  dir = tempDir('zp-sloth-live-');
  const log = join(dir, 'gateway.log');
  writeFileSync(log, '');
  const configFile = join(dir, 'zp.yml');
  writeFileSync(configFile, '');
  exporter = await startServe([`--config.file=${configFile}`, log]);
  // One write per batch, so a scrape sees whole batches and every ratio is the batch's exactly.
  writer = setInterval(() => appendFileSync(log, batch()), 100);
  const started = await startPrometheus(promBin, { dir, rules: renderPack(PACK).get('zero-plane.rules.yml') as string, scrapeTarget: exporter.url.replace('http://', '') });
  promUrl = started.url;
  prometheus = started.daemon;
}, 60_000);

afterAll(async () => {
  if (writer) clearInterval(writer);
  await Promise.allSettled([prometheus?.stop(), exporter?.stop('SIGKILL')]);
});

describe("Sloth's UI queries against the pack's slo:* series", () => {
  it.each(queries.instant.map((q) => [q.source, q.query]))(
    '%s: %s returns data for both SLOs',
    async (_source, query) => {
      const r = await forEverySlo(query);
      for (const s of r) expect(IDS, query).toContain(s.metric.sloth_id);
    },
    40_000,
  );

  it('the range query of each SLO (its shortest SLI window substituted) returns points', async () => {
    const windows = await forEverySlo('count({__name__=~"^slo:sli_error:ratio_rate.*"}) by (__name__, sloth_id)');
    const template = queries.range[0]?.query as string;
    for (const id of IDS) {
      const names = windows.filter((s) => s.metric.sloth_id === id).map((s) => s.metric.__name__ as string);
      // The windows as Sloth sorts them: the shortest first (10s here; 5m by default).
      const seconds = (name: string) => {
        const m = /ratio_rate(\d+)([smhdw])$/.exec(name);
        return m ? Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 }[m[2] as 's'] : Infinity;
      };
      const shortest = names.sort((a, b) => seconds(a) - seconds(b))[0] as string;
      expect(shortest).toBe('slo:sli_error:ratio_rate10s');
      const query = template.replace('${sli_metric}', shortest).replace('${sloth_id}', id);
      const end = Date.now() / 1000;
      const points = await waitFor(
        async () => {
          const r = await api('query_range', { query, start: String(end - 30), end: String(end), step: '1' });
          return (r[0]?.values?.length ?? 0) > 0 ? r[0]?.values : undefined;
        },
        20_000,
        query,
      );
      // Availability: 1 - the bad share, 90 % of requests served by Zero-Plane, 15 of 18 fast enough.
      const last = Number(points?.at(-1)?.[1]);
      expect(last, query).toBeCloseTo(id.endsWith('hit-rate') ? 0.9 : 15 / 18, 9);
    }
  }, 40_000);

  it('the series mean what they mean in Sloth: objective, budget, period in days, burn rate = SLI / budget', async () => {
    const value = async (query: string, id: string) => Number((await forEverySlo(query)).find((s) => s.metric.sloth_id === id)?.value?.[1]);
    expect(await value('slo:objective:ratio', 'zero-plane-hit-rate')).toBe(0.994);
    expect(await value('slo:error_budget:ratio', 'zero-plane-latency')).toBe(0.01);
    expect(await value('slo:time_period:days', 'zero-plane-latency')).toBeCloseTo(1 / 24, 12);
    expect(await value('slo:current_burn_rate:ratio', 'zero-plane-hit-rate')).toBeCloseTo(0.1 / 0.006, 9);
    expect(await value('slo:current_burn_rate:ratio', 'zero-plane-latency')).toBeCloseTo(3 / 18 / 0.01, 9);
    // Over the period (hourly steps in production, 4 s here): every step holds whole batches, 10 % bad.
    expect(await value('slo:period_error_budget_remaining:ratio', 'zero-plane-hit-rate')).toBeCloseTo(1 - 0.1 / 0.006, 6);
    const info = (await forEverySlo('sloth_slo_info')).find((s) => s.metric.sloth_id === 'zero-plane-latency');
    expect(info?.metric).toMatchObject({ sloth_service: 'zero-plane', sloth_slo: 'latency', sloth_objective: '99' });
    // The burn alerts carry Sloth's labels too: both SLOs burn far above 13.44x here.
    const alerts = await forEverySlo('ALERTS{sloth_id!="", alertstate="firing"}');
    expect(new Set(alerts.map((a) => a.metric.sloth_severity))).toEqual(new Set(['page', 'ticket']));
  }, 40_000);
});
