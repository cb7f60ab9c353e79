// The probe against the simulator, through the real @anthropic-ai/sdk over loopback: the fast layer, a
// malformed opt-in, a long context (downgraded in balanced mode, refused with 429 in strict mode) and a
// degraded answer each give the result the simulator's own decision says they should; a probe is exactly
// one request (max_tokens 1, the exact opt-in header, no retry on 429 or 500); the rate bound holds; and
// the `probe` command prints it as text or JSON with the exit codes of its help.
import { execFile } from 'node:child_process';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import type { Config } from '../../../src/config/schema.js';
import { ProbeBudgetExhausted } from '../../../src/probe/probe-limiter.js';
import type { ProbeResult } from '../../../src/probe/probe-request.js';
import { Prober } from '../../../src/probe/prober.js';
import { startSimulator, type RunningSimulator, type SimulatorAnswer } from '../../../src/simulate/simulator.js';
import { freePort } from '../../helpers/processes.js';
import { BIN } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const run = promisify(execFile);
const dir = tempDir('zp-probe-');
const keyFile = join(dir, 'api-key');
writeFileSync(keyFile, 'sk-ant-test-key\n');

/** A system prompt the simulator's fast layer refuses: more than 1200 tokens (characters / 4). */
const LONG_SYSTEM = 'x'.repeat(1201 * 4);

let balanced: RunningSimulator;
let strict: RunningSimulator;
const answers: SimulatorAnswer[] = [];

beforeAll(async () => {
  balanced = await startSimulator({ seed: 7, onAnswer: (a) => answers.push(a) });
  strict = await startSimulator({ seed: 7, mode: 'strict', onAnswer: (a) => answers.push(a) });
});
afterAll(async () => {
  await balanced?.close();
  await strict?.close();
});

function configFor(modules: string, top = ''): Config {
  return parseConfig(`probe:\n${top}  modules:\n${modules}`, 'zp.yml');
}

const module = (name: string, baseURL: string, extra = '') => `    ${name}:\n      baseURL: ${baseURL}\n      apiKeyFile: ${keyFile}\n      model: claude-sonnet\n${extra}`;

/** One probe of `name`, and the simulator answers it caused. */
async function probeOnce(config: Config, name: string): Promise<{ result: ProbeResult; answers: SimulatorAnswer[] }> {
  const before = answers.length;
  const prober = new Prober(config);
  const { result, reused } = await prober.probe(prober.resolve(name, undefined));
  expect(reused).toBe(false);
  return { result, answers: answers.slice(before) };
}

describe('probe against the simulator (the real SDK)', () => {
  it('fast layer: success, served by Zero-Plane, the delay profile parsed, the exact opt-in sent', async () => {
    const { result, answers: sent } = await probeOnce(configFor(module('fast', balanced.url)), 'fast');
    expect(sent).toHaveLength(1);
    const decision = sent[0]?.decision;
    expect(decision?.outcome).toBe('fast');
    expect(sent[0]?.optIn).toBe('zero-plane-2024');
    const profile = decision?.headers['x-anthropic-delay-profile'] as string;
    expect(result).toMatchObject({
      success: true,
      layerHit: true,
      fallback: false,
      httpStatus: 200,
      layerId: 'zero-plane-v1',
      degraded: false,
      warmup: /warmup=hit/.test(profile) ? 'hit' : 'miss',
      mode: 'balanced',
      delayProfile: profile,
      delayProfileInvalid: false,
      downgradeReason: null,
      optIn: { state: 'valid', defect: null },
      error: null,
      sdk: { name: '@anthropic-ai/sdk', outdated: false, minimum: null },
      warnings: [],
    });
    expect(result.sdk.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(result.durationSeconds).toBeGreaterThan(0);
  });

  it('malformed opt-in (a soft hyphen inside the value): answered by the standard layer, a failed probe that says why', async () => {
    const { result, answers: sent } = await probeOnce(configFor(module('soft', balanced.url, '      headers: { x-anthropic-experimental: "zero-plane\u00ad-2024" }\n')), 'soft');
    expect(sent[0]?.decision.outcome).toBe('fallback');
    expect(result).toMatchObject({ success: false, layerHit: false, fallback: true, httpStatus: 200, layerId: 'standard-v3', optIn: { state: 'malformed', defect: 'invisible_char' } });
    expect(result.warnings.join('\n')).toMatch(/opt-in header sent is malformed \(invisible_char\)/);
  });

  it('long context, balanced mode: downgraded to the standard layer with the reason', async () => {
    const { result, answers: sent } = await probeOnce(configFor(module('long', balanced.url, `      system: "${LONG_SYSTEM}"\n`)), 'long');
    expect(sent[0]?.decision.outcome).toBe('downgraded');
    expect(result).toMatchObject({ success: false, layerHit: false, fallback: true, httpStatus: 200, downgradeReason: 'context_too_long', layerId: 'standard-v3', error: null });
  });

  it('long context, strict mode: 429 with the reason and mode=strict, in one request', async () => {
    const { result, answers: sent } = await probeOnce(configFor(module('long', strict.url, `      system: "${LONG_SYSTEM}"\n`)), 'long');
    expect(sent.map((a) => a.decision.outcome)).toEqual(['rejected']);
    expect(result).toMatchObject({ success: false, layerHit: false, fallback: true, httpStatus: 429, downgradeReason: 'context_too_long', mode: 'strict', layerId: null });
    expect(result.error).toMatch(/context_too_long/);
  });

  it('degraded: served by Zero-Plane with degraded=?1; a success unless the module sets failIfDegraded', async () => {
    balanced.faults.set({ degradedRate: 1 });
    try {
      const { result } = await probeOnce(configFor(module('deg', balanced.url)), 'deg');
      expect(result).toMatchObject({ success: true, layerHit: true, degraded: true, httpStatus: 200, mode: 'balanced' });
      const { result: strictResult } = await probeOnce(configFor(module('deg', balanced.url, '      failIfDegraded: true\n')), 'deg');
      expect(strictResult).toMatchObject({ success: false, layerHit: true, degraded: true, fallback: false });
    } finally {
      balanced.faults.reset();
    }
  });

  it('no answer (nothing listens): failed, no status, not a fall-back, the reason given', async () => {
    const port = await freePort();
    const { result } = await probeOnce(configFor(module('gone', `http://127.0.0.1:${port}`)), 'gone');
    expect(result).toMatchObject({ success: false, layerHit: false, fallback: false, httpStatus: null });
    expect(result.error).toBeTruthy();
  });

  it('an SDK older than probe.minimumSdkVersion is reported and warned about', async () => {
    const { result } = await probeOnce(configFor(module('old', balanced.url), '  minimumSdkVersion: 999.0.0\n'), 'old');
    expect(result.sdk).toMatchObject({ minimum: '999.0.0', outdated: true });
    expect(result.warnings.join('\n')).toMatch(/older than 999\.0\.0/);
  });
});

describe('one probe is one minimal request', () => {
  let server: Server;
  let url: string;
  const seen: { body: unknown; headers: IncomingMessage['headers'] }[] = [];
  /** A status to answer with, or 'hang': read the request and never answer. */
  let status: number | 'hang' = 200;

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ body: JSON.parse(body) as unknown, headers: req.headers });
        if (status === 'hang') return;
        res.writeHead(status, { 'content-type': 'application/json', 'x-anthropic-layer-id': 'zero-plane-v1', 'retry-after': '0' });
        res.end(
          status === 200
            ? JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'm', content: [], stop_reason: 'max_tokens', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } })
            : JSON.stringify({ type: 'error', error: { type: 'api_error', message: 'boom' } }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('max_tokens 1, the module prompt, the opt-in header and the key from the file; no retry on 429 or 500', async () => {
    const config = configFor(module('rec', url, '      prompt: are you there\n      headers: { x-probe: "1" }\n'));
    for (const s of [200, 429, 500]) {
      status = s;
      seen.length = 0;
      const prober = new Prober(config);
      const { result } = await prober.probe(prober.resolve('rec', undefined));
      expect(seen, `status ${s}`).toHaveLength(1);
      expect(result.httpStatus).toBe(s);
      expect(result.success).toBe(s === 200);
    }
    const only = seen[0] as { body: Record<string, unknown>; headers: IncomingMessage['headers'] };
    expect(only.body).toEqual({ model: 'claude-sonnet', max_tokens: 1, messages: [{ role: 'user', content: 'are you there' }] });
    expect(only.headers['x-anthropic-experimental']).toBe('zero-plane-2024');
    expect(only.headers['x-probe']).toBe('1');
    // The SDK sends the key as x-api-key or (1.x) as a bearer token: the file's key, trimmed, either way.
    expect(only.headers['x-api-key'] ?? only.headers.authorization?.replace(/^Bearer /, '')).toBe('sk-ant-test-key');
  });

  it('past the module timeout: one request, no status, not a fall-back, the timeout named', async () => {
    status = 'hang';
    seen.length = 0;
    const prober = new Prober(configFor(module('slow', url, '      timeout: 300ms\n')));
    const { result } = await prober.probe(prober.resolve('slow', undefined));
    expect(seen).toHaveLength(1);
    expect(result).toMatchObject({ success: false, fallback: false, httpStatus: null });
    expect(result.error).toMatch(/timed out/i);
    status = 200;
  });
});

describe('the rate bound', () => {
  it('within probe.minInterval the last result comes again; concurrent probes of one target share one request; the hourly budget holds', async () => {
    const config = configFor(module('r', balanced.url, `      allowedTargets: [${strict.url}]\n`), '  minInterval: 1h\n  maxRequestsPerHour: 2\n');
    const prober = new Prober(config);
    const target = prober.resolve('r', undefined);
    const before = answers.length;
    const together = await Promise.all(Array.from({ length: 5 }, () => prober.probe(target)));
    expect(answers.length - before).toBe(1);
    expect(new Set(together.map((t) => t.result)).size).toBe(1);
    const again = await prober.probe(target);
    expect(again.reused).toBe(true);
    expect(again.result).toBe(together[0]?.result);
    expect(answers.length - before).toBe(1);
    // The second target spends the last request of the hour; a third request has no budget left.
    await prober.probe(prober.resolve('r', strict.url));
    expect(answers.length - before).toBe(2);
    expect(prober.limiter.sentLastHour).toBe(2);
    const third = configFor(module('r', balanced.url, `      allowedTargets: [${strict.url}, ${balanced.url}/v2]\n`), '  minInterval: 1h\n  maxRequestsPerHour: 2\n');
    const p3 = new Prober(third);
    await p3.probe(p3.resolve('r', undefined));
    await p3.probe(p3.resolve('r', strict.url));
    await expect(p3.probe(p3.resolve('r', `${balanced.url}/v2`))).rejects.toBeInstanceOf(ProbeBudgetExhausted);
  });
});

describe('the probe command', () => {
  const cli = async (args: string[]) => {
    try {
      const r = await run(process.execPath, [BIN, 'probe', ...args], { encoding: 'utf8', timeout: 30_000 });
      return { code: 0, stdout: r.stdout, stderr: r.stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('exit 0 and the text on a Zero-Plane answer; 3 and one JSON object on a fall-back; 1 with no answer', async () => {
    const port = await freePort();
    const zp = file(
      'cli.yml',
      `probe:\n  modules:\n${module('fast', balanced.url)}${module('soft', balanced.url, '      headers: { x-anthropic-experimental: Zero-Plane-2024 }\n')}${module('gone', `http://127.0.0.1:${port}`)}`,
    );
    const ok = await cli([`--config.file=${zp}`, '--module=fast']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/result: +success: served by Zero-Plane/);
    expect(ok.stdout).toMatch(/delay profile: +warmup=(hit|miss) degraded=no mode=balanced/);
    const fallback = await cli([`--config.file=${zp}`, '--module=soft', '--format=json', balanced.url]);
    expect(fallback.code).toBe(3);
    const json = JSON.parse(fallback.stdout) as ProbeResult & { reused: boolean };
    expect(json).toMatchObject({ success: false, fallback: true, httpStatus: 200, layerId: 'standard-v3', optIn: { state: 'malformed', defect: 'case' }, reused: false });
    expect(fallback.stderr).toMatch(/warning: the opt-in header sent is malformed \(case\)/);
    const none = await cli([`--config.file=${zp}`, '--module=gone']);
    expect(none.code).toBe(1);
    expect(none.stdout).toMatch(/FAILED: no answer/);
  });

  it('exit 2: an unknown module, a target the module may not use, no key file, and a bad config naming file, line and key', async () => {
    const zp = file('cli2.yml', `probe:\n  modules:\n${module('fast', balanced.url)}    nokey:\n      baseURL: ${balanced.url}\n`);
    const unknown = await cli([`--config.file=${zp}`, '--module=nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/unknown module "nope": probe.modules has fast, nokey/);
    const elsewhere = await cli([`--config.file=${zp}`, '--module=fast', 'https://attacker.example']);
    expect(elsewhere.code).toBe(2);
    expect(elsewhere.stderr).toMatch(/not one module "fast" may probe: its API key would be sent there.*probe\.modules\.fast\.allowedTargets/);
    const nokey = await cli([`--config.file=${zp}`, '--module=nokey']);
    expect(nokey.code).toBe(2);
    expect(nokey.stderr).toMatch(/probe\.modules\.nokey\.apiKeyFile: unset/);
    const bad = file('bad.yml', 'probe:\n  modules:\n    zp:\n      model: m\n      timeout: soon\n');
    const badRun = await cli([`--config.file=${bad}`]);
    expect(badRun.code).toBe(2);
    expect(badRun.stderr).toContain(`${bad}:5: probe.modules.zp.timeout: "soon" is not a duration`);
    const badTarget = file('bad2.yml', 'probe:\n  modules:\n    zp:\n      baseURL: "ftp://x"\n');
    expect((await cli([`--config.file=${badTarget}`])).stderr).toContain(`${badTarget}:4: probe.modules.zp.baseURL:`);
  });
});
