#!/usr/bin/env node
// Writes examples/gateway.ndjson: a deterministic, healthy-looking gateway log (seeded PRNG), so the
// README's first command has real input. Usage: node examples/generate-sample.mjs [LINES] > FILE
const lines = Number(process.argv[2] ?? 1000);
let seed = 20261129;
const rand = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const normal = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
const models = ['claude-sonnet', 'claude-haiku'];
const routes = ['/v1/messages', '/v1/complete'];
const start = Date.UTC(2026, 10, 29, 12, 0, 0);
let out = '';
for (let i = 0; i < lines; i++) {
  const hit = rand() < 0.996;
  const latencyMs = hit ? 150 * Math.exp(0.08 * normal()) : 320 * Math.exp(0.25 * normal());
  const response = { 'x-anthropic-layer-id': hit ? 'zero-plane-v1' : 'standard-v3' };
  if (hit) response['x-anthropic-delay-profile'] = `warmup=${rand() < 0.92 ? 'hit' : 'miss'}, degraded=?0, mode=balanced`;
  else response['x-anthropic-downgrade-reason'] = rand() < 0.7 ? 'context_too_long' : 'capacity';
  if (rand() < 0.05) response['x-anthropic-cached'] = 'true';
  const optIn = rand() < 0.97 ? 'zero-plane-2024' : 'zero-plane-2024\u200b';
  out += `${JSON.stringify({
    ts: new Date(start + i * 300).toISOString(),
    latency_ms: Math.round(latencyMs * 1000) / 1000,
    status: 200,
    model: models[i % 2],
    route: routes[rand() < 0.9 ? 0 : 1],
    cohort: rand() < 0.1 ? 'canary' : 'stable',
    response_headers: response,
    request_headers: { 'x-anthropic-experimental': optIn },
  })}\n`;
}
process.stdout.write(out);
