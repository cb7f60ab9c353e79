// What the client needs to run is the package's own files and nothing else: the packed tarball (what
// npm publishes) unpacked into an application's node_modules with NO other package beside it, and the
// client imported by name and used for a log-file destination, the gate client, and both metrics
// texts. A package the client still loaded at import, or for those destinations, fails this with
// ERR_MODULE_NOT_FOUND. (The in-process destination runs the exporter's pipeline: it needs the full
// install, and says so, counted, when that is missing.)
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { requireBinary } from '../../helpers/binaries.js';
import { tempDir } from '../../helpers/temp-dir.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
let app = '';

beforeAll(() => {
  const npm = requireBinary('npm');
  const tar = requireBinary('tar');
  const dir = tempDir('zp-client-alone-');
  // --ignore-scripts: dist/ is built (npm test builds first).
  const packed = JSON.parse(execFileSync(npm, ['pack', '--json', '--ignore-scripts', `--pack-destination=${dir}`], { cwd: ROOT, encoding: 'utf8' })) as { filename: string }[];
  app = join(dir, 'app');
  const pkg = join(app, 'node_modules', 'zero-plane-exporter');
  mkdirSync(pkg, { recursive: true });
  execFileSync(tar, ['-xzf', join(dir, (packed[0] as { filename: string }).filename), '--strip-components=1', '-C', pkg]);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', type: 'module', private: true }));
}, 120_000);

function run(source: string): { stdout: string; stderr: string; status: number | null } {
  return spawnSync(process.execPath, ['--input-type=module', '-e', source], { cwd: app, encoding: 'utf8', timeout: 30_000 });
}

describe('the client installed without any other package', () => {
  it('has nothing else in node_modules', () => {
    expect(readdirSync(join(app, 'node_modules'))).toEqual(['zero-plane-exporter']);
  });

  it('imports, records calls to a log file, gates, and shows its metrics', () => {
    const log = join(app, 'calls.log');
    const r = run(`import { createServer } from 'node:http';
import { gateClient, instrumentFetch, metricsText } from 'zero-plane-exporter/client';
const server = createServer((req, res) => res.writeHead(200, { 'content-type': 'application/json', 'x-anthropic-layer-id': 'zero-plane-v3' }).end(JSON.stringify({ model: 'claude-x-1', usage: { input_tokens: 3, output_tokens: 5 } })));
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const url = 'http://127.0.0.1:' + server.address().port;
const zp = instrumentFetch(fetch, { to: { logFile: ${JSON.stringify(log)} }, warn: (m) => console.error(m) });
const answer = await zp(url + '/v1/messages', { method: 'POST', headers: { 'x-anthropic-experimental': 'zero-plane-2024' }, body: JSON.stringify({ model: 'claude-x' }) });
await answer.json();
const gate = gateClient({ url: 'http://127.0.0.1:9', timeout: 200, failOpen: false, warn: () => {} });
const decision = await gate.decide('non-core');
await zp.close();
gate.close();
server.close();
console.log(JSON.stringify({ records: zp.records(), decision, text: metricsText([zp, gate]) }));`);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { records: { delivered: number }; decision: { allowed: boolean; reason: string }; text: string };
    expect(out.records).toEqual({ delivered: 1, dropped: 0, rejected: 0, pending: 0 });
    expect(out.decision).toEqual({ allowed: false, reason: 'fail_closed' });
    expect(out.text).toMatch(/^zero_plane_client_records_total\{to="log-file",result="delivered"\} 1$/m);
    expect(out.text).toMatch(/^gen_ai_client_token_usage_sum\{.*gen_ai_token_type="output"\} 5$/m);
    expect(out.text).toMatch(/^zero_plane_gate_client_decisions_total\{kind="non-core",decision="skipped",reason="fail_closed"\} 1$/m);
    const line = JSON.parse(readFileSync(log, 'utf8').trim()) as { status: number; model: string; response_model: string; tokens: unknown };
    expect(line).toMatchObject({ status: 200, model: 'claude-x', response_model: 'claude-x-1', tokens: { input: 3, output: 5, cache_read: 0, cache_creation: 0 } });
  });

  it('a wrong option is a ClientOptionsError naming it, without any schema library', () => {
    const r = run(`import { instrumentFetch } from 'zero-plane-exporter/client';
try { instrumentFetch(fetch, { to: { ingest: { url: 'ftp://x' } } }); } catch (err) { console.log(err.name + ' ' + err.message); }`);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('ClientOptionsError instrumentFetch: to.ingest.url: Invalid URL: "ftp://x" is not http(s)');
  });

  it('in-process without the full install: the call goes on, its record is counted as dropped, with a warning', () => {
    const r = run(`import { instrumentFetch, metricsText } from 'zero-plane-exporter/client';
const warnings = [];
const zp = instrumentFetch(async () => new Response('{}', { headers: { 'content-type': 'application/json' } }), { warn: (m) => warnings.push(m) });
const res = await zp('http://api.invalid/v1/messages', { method: 'POST', body: '{}' });
await res.text();
console.log(JSON.stringify({ status: res.status, records: zp.records(), warnings }));`);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { status: number; records: { dropped: number }; warnings: string[] };
    expect(out.status).toBe(200);
    expect(out.records.dropped).toBe(1);
    expect(out.warnings.join('\n')).toMatch(/the in-process pipeline could not be loaded \(Cannot find package '(zod|structured-headers|@datadog\/sketches-js)'/);
  });
});
