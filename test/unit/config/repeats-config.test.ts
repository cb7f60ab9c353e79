// repeats.k and repeats.top: defaults, and a bad value refused naming the file, the line and the key.
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config/config-error.js';
import { parseConfig } from '../../../src/config/load.js';
import { defaultConfig } from '../../../src/config/schema.js';

describe('repeats config', () => {
  it('defaults to 1000 kept hashes and a top 10', () => {
    expect(defaultConfig().repeats).toEqual({ k: 1000, top: 10 });
    expect(parseConfig('repeats:\n  k: 50\n  top: 5\n', 'zp.yml').repeats).toEqual({ k: 50, top: 5 });
  });

  it.each([
    ['repeats:\n  k: 5\n', /^zp\.yml:2: repeats\.k: /],
    ['repeats:\n  k: 1000001\n', /^zp\.yml:2: repeats\.k: /],
    ['repeats:\n  k: 12.5\n', /^zp\.yml:2: repeats\.k: /],
    ['repeats:\n  top: 0\n', /^zp\.yml:2: repeats\.top: /],
    ['repeats:\n  k: 10\n  top: 20\n', /^zp\.yml:3: repeats\.top: `top` must not exceed `k`/],
    ['repeats:\n  kk: 10\n', /kk/],
  ])('refuses %j', (yaml, message) => {
    expect(() => parseConfig(yaml, 'zp.yml')).toThrow(ConfigError);
    expect(() => parseConfig(yaml, 'zp.yml')).toThrow(message);
  });
});
