import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../../src/config/schema.js';
import type { GatewayRecord } from '../../../src/record/parse-record.js';
import { SignalClassifier } from '../../../src/signals/classify.js';
import { DelayProfileReader } from '../../../src/signals/delay-profile.js';
import { classifyOptIn } from '../../../src/signals/opt-in.js';

const classifier = new SignalClassifier(defaultConfig().headers);
function signalsOf(res: Record<string, string>, req?: Record<string, string>) {
  const r: GatewayRecord = { timeMs: undefined, latencySeconds: 0.1, status: 200, model: '', route: '', cohort: '', responseHeaders: res, requestHeaders: req };
  return classifier.classify(r);
}

describe('hit: x-anthropic-layer-id matches ^zero-plane-v[0-9]+$', () => {
  it.each([
    ['zero-plane-v1', true],
    ['zero-plane-v42', true],
    ['zero-plane-v', false],
    ['zero-plane-vx', false],
    ['Zero-Plane-v1', false],
    ['zero-plane-v1 ', false],
    ['zero-plane-v1, zero-plane-v1', false],
  ])('%j → %s', (value, hit) => {
    expect(signalsOf({ 'x-anthropic-layer-id': value }).hit).toBe(hit);
  });
  it('absent header is not a hit', () => expect(signalsOf({}).hit).toBe(false));
});

describe('delay profile (RFC 8941 Dictionary)', () => {
  const reader = new DelayProfileReader({ degradedMember: 'degraded', warmupMember: 'warmup', modeMember: 'mode' });
  it.each([
    ['warmup=hit, degraded=?0, mode=balanced', { degraded: false, warmup: 'hit', mode: 'balanced' }],
    ['degraded, warmup=miss', { degraded: true, warmup: 'miss', mode: undefined }],
    ['degraded=?1;reason=overload', { degraded: true, warmup: undefined, mode: undefined }],
    ['mode=adaptive,warmup=cold', { degraded: false, warmup: undefined, mode: 'adaptive' }],
    ['warmup="hit", mode=turbo', { degraded: false, warmup: undefined, mode: undefined }],
    ['degraded=1', { degraded: false, warmup: undefined, mode: undefined }],
    ['degraded=(?1)', { degraded: false, warmup: undefined, mode: undefined }],
    ['', { degraded: false, warmup: undefined, mode: undefined }],
  ])('%j', (value, expected) => {
    expect(reader.read(value)).toEqual(expected);
  });
  it.each(['warmup=hit,,', 'Warmup=hit', 'degraded=?2', 'warmup=hit degraded', '=x', 'mode=bal anced'])('%j does not parse → null', (value) => {
    expect(reader.read(value)).toBeNull();
  });

  it('classifier: degraded on any request; warm-up only for hits; bad profile flagged, request still classified', () => {
    expect(signalsOf({ 'x-anthropic-delay-profile': 'degraded, warmup=hit' })).toMatchObject({ hit: false, degraded: true, warmup: undefined });
    expect(signalsOf({ 'x-anthropic-layer-id': 'zero-plane-v1', 'x-anthropic-delay-profile': 'warmup=hit' })).toMatchObject({ hit: true, warmup: 'hit' });
    expect(signalsOf({ 'x-anthropic-layer-id': 'zero-plane-v1', 'x-anthropic-delay-profile': 'warmup=hit,,' })).toMatchObject({
      hit: true,
      degraded: false,
      warmup: undefined,
      delayProfileInvalid: true,
    });
  });
});

describe('cached and downgrade', () => {
  it('cached only when exactly "true"', () => {
    expect(signalsOf({ 'x-anthropic-cached': 'true' }).cached).toBe(true);
    expect(signalsOf({ 'x-anthropic-cached': 'True' }).cached).toBe(false);
    expect(signalsOf({ 'x-anthropic-cached': '1' }).cached).toBe(false);
  });
  it('downgrade reason passes through', () => {
    expect(signalsOf({ 'x-anthropic-downgrade-reason': 'context_too_long' }).downgradeReason).toBe('context_too_long');
    expect(signalsOf({}).downgradeReason).toBeUndefined();
  });
});

describe('opt-in header', () => {
  const expected = 'zero-plane-2024';
  it.each([
    ['zero-plane-2024', 'valid', undefined],
    ['zero-plane-2024\u200b', 'malformed', 'invisible_char'],
    ['\ufeffzero-plane-2024', 'malformed', 'invisible_char'],
    ['zero\u2060-plane-2024', 'malformed', 'invisible_char'],
    [' zero-plane-2024', 'malformed', 'whitespace'],
    ['zero-plane-2024\t', 'malformed', 'whitespace'],
    ['Zero-Plane-2024', 'malformed', 'case'],
    ['zero-plane-2023', 'malformed', 'value'],
    [' Zero-Plane-2024', 'malformed', 'value'],
  ] as const)('%j → %s %s', (value, state, defect) => {
    expect(classifyOptIn(value, expected)).toEqual({ state, defect });
  });
  it('no header is missing, but only when the log carries request headers', () => {
    expect(signalsOf({}, {}).optIn).toEqual({ state: 'missing', defect: undefined });
    expect(signalsOf({}).optIn).toBeUndefined();
  });
});

describe('the signals of the previous line, reused', () => {
  it('for the same frozen header objects (what the byte scan hands out), and never for an object that changed', () => {
    const frozen = Object.freeze({ 'x-anthropic-layer-id': 'zero-plane-v1', 'x-anthropic-delay-profile': 'degraded=?1' });
    const first = signalsOf(frozen);
    expect(signalsOf(frozen)).toBe(first);
    expect(first).toMatchObject({ hit: true, degraded: true });
    // A mutable object seen again after a change is read again: identity says nothing about its values.
    const open: Record<string, string> = { 'x-anthropic-layer-id': 'zero-plane-v1' };
    expect(signalsOf(open).hit).toBe(true);
    open['x-anthropic-layer-id'] = 'fallback';
    expect(signalsOf(open).hit).toBe(false);
    // The request side is part of the key: same response headers, other opt-in.
    const req = Object.freeze({ 'x-anthropic-experimental': 'zero-plane-2024' });
    expect(signalsOf(frozen, req).optIn?.state).toBe('valid');
    expect(signalsOf(frozen, Object.freeze({})).optIn?.state).toBe('missing');
  });
});
