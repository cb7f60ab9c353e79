// The probe's parts that need no request: the rate bound on a clock of its own, the SDK version check, the
// missing-SDK error, the target rules, the exposition, and that the client entry point never loads the SDK.
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { normalTarget } from '../../../src/config/probe-schema.js';
import { parseConfig } from '../../../src/config/load.js';
import { probeExposition } from '../../../src/probe/probe-exposition.js';
import { ProbeBudgetExhausted, ProbeLimiter } from '../../../src/probe/probe-limiter.js';
import { probeHeaders, type ProbeResult } from '../../../src/probe/probe-request.js';
import { ProbeParamError, Prober } from '../../../src/probe/prober.js';
import { loadSdk, SdkMissingError, versionBelow } from '../../../src/probe/sdk.js';

const RESULT: ProbeResult = {
  module: 'zp',
  target: 'https://api.anthropic.com',
  model: 'm',
  success: false,
  layerHit: false,
  fallback: true,
  durationSeconds: 0.25,
  httpStatus: 429,
  layerId: null,
  degraded: false,
  warmup: null,
  mode: 'strict',
  delayProfile: 'mode=strict',
  delayProfileInvalid: false,
  downgradeReason: 'context "too" long\\',
  cached: false,
  optIn: { state: 'valid', defect: null },
  error: 'rate limited',
  sdk: { name: '@anthropic-ai/sdk', version: '1.15.0', minimum: null, outdated: false },
  warnings: [],
  at: '2026-01-01T00:00:00.000Z',
};

describe('the rate bound', () => {
  it('gives the last result within minInterval, a new request after it, and refuses past the hourly budget until the oldest request is an hour old', async () => {
    let now = 0;
    const limiter = new ProbeLimiter({ minIntervalMs: 30_000, maxRequestsPerHour: 3, now: () => now });
    let sent = 0;
    const send = () => Promise.resolve({ ...RESULT, at: String(++sent) });
    expect((await limiter.run('a', send)).reused).toBe(false);
    now = 29_999;
    const again = await limiter.run('a', send);
    expect(again).toMatchObject({ reused: true, ageSeconds: 29.999 });
    expect(sent).toBe(1);
    now = 30_000;
    expect((await limiter.run('a', send)).reused).toBe(false);
    expect((await limiter.run('b', send)).reused).toBe(false);
    expect(sent).toBe(3);
    // Budget spent: a target with a result gets it again, one without is refused with the wait.
    now = 100_000;
    expect(await limiter.run('a', send)).toMatchObject({ reused: true });
    const refused = limiter.run('c', send);
    await expect(refused).rejects.toBeInstanceOf(ProbeBudgetExhausted);
    await expect(limiter.run('c', send)).rejects.toThrow(/next is allowed in 3500 s/);
    now = 3_600_001;
    expect((await limiter.run('c', send)).reused).toBe(false);
    expect(sent).toBe(4);
  });
});

describe('the SDK', () => {
  it('compares versions numerically (1.10.0 is not below 1.9.0)', () => {
    expect(versionBelow('1.9.0', '1.10.0')).toBe(true);
    expect(versionBelow('1.10.0', '1.9.0')).toBe(false);
    expect(versionBelow('0.30.0', '0.30.0')).toBe(false);
    expect(versionBelow('0.29.9-beta.1', '0.30.0')).toBe(true);
  });

  it('a missing SDK is an error that says what to install', async () => {
    const err = await loadSdk('@anthropic-ai/no-such-sdk').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SdkMissingError);
    expect((err as Error).message).toMatch(/optional dependency that is not installed here: run `npm install @anthropic-ai\/no-such-sdk`/);
  });

  it('the client entry point imports neither the SDK nor the probe', () => {
    const dir = fileURLToPath(new URL('../../../src/client/', import.meta.url));
    for (const f of readdirSync(dir).filter((n) => n.endsWith('.ts'))) {
      const text = readFileSync(`${dir}${f}`, 'utf8');
      expect(text, f).not.toMatch(/from '@anthropic-ai\/sdk'|import\('@anthropic-ai\/sdk'\)|\.\.\/probe\//);
    }
  });
});

describe('modules and targets', () => {
  const config = parseConfig('probe:\n  modules:\n    a:\n      baseURL: https://API.example.com/v1/\n      allowedTargets: [http://gw:8080]\n    b: {}\n', 'zp.yml');

  it('normalises targets and refuses any the module may not send its key to', () => {
    expect(normalTarget('https://API.example.com/v1/')).toBe('https://api.example.com/v1');
    expect(normalTarget('https://x.example/?a=1')).toBeUndefined();
    expect(normalTarget('https://user:pw@x.example')).toBeUndefined();
    expect(normalTarget('file:///etc/passwd')).toBeUndefined();
    const prober = new Prober(config);
    expect(prober.resolve('a', undefined).target).toBe('https://api.example.com/v1');
    expect(prober.resolve('a', 'http://gw:8080/').target).toBe('http://gw:8080');
    expect(() => prober.resolve('a', 'http://elsewhere:8080')).toThrow(ProbeParamError);
    expect(() => prober.resolve(undefined, undefined)).toThrow(/name a module: one of a, b/);
    expect(() => prober.resolve('__proto__', undefined)).toThrow(/unknown module "__proto__"/);
  });

  it('adds the exact opt-in header unless the module names that header itself (in any case)', () => {
    const plain = config.probe.modules.b;
    if (plain === undefined) throw new Error('no module b');
    expect(probeHeaders(config, plain)).toEqual({ 'x-anthropic-experimental': 'zero-plane-2024' });
    expect(probeHeaders(config, { ...plain, headers: { 'X-Anthropic-Experimental': 'Zero-Plane-2024', 'x-a': '1' } })).toEqual({ 'X-Anthropic-Experimental': 'Zero-Plane-2024', 'x-a': '1' });
  });
});

describe('the exposition', () => {
  it('writes each gauge once with HELP and TYPE, escapes label values, and 0 for no HTTP status', () => {
    const text = probeExposition({ result: RESULT, reused: true, ageSeconds: 12 });
    expect(text).toMatch(/^probe_success 0$/m);
    expect(text).toMatch(/^probe_http_status_code 429$/m);
    expect(text).toMatch(/^zero_plane_probe_fallback 1$/m);
    expect(text).toMatch(/^zero_plane_probe_delay_profile\{warmup="unknown",mode="strict"\} 1$/m);
    expect(text).toContain('zero_plane_probe_downgrade{reason="context \\"too\\" long\\\\"} 1');
    expect(text).toMatch(/^zero_plane_probe_reused 1$/m);
    expect(text).toMatch(/^zero_plane_probe_result_age_seconds 12$/m);
    const names = [...text.matchAll(/^# TYPE (\S+) gauge$/gm)].map((m) => m[1]);
    expect(new Set(names).size).toBe(names.length);
    expect(probeExposition({ result: { ...RESULT, httpStatus: null, downgradeReason: null }, reused: false, ageSeconds: 0 })).toMatch(/^probe_http_status_code 0$/m);
    expect(probeExposition({ result: { ...RESULT, downgradeReason: null }, reused: false, ageSeconds: 0 })).not.toContain('zero_plane_probe_downgrade');
  });
});
