// The message a config text is refused with (parseConfig throws a ConfigError naming file, line and key);
// fails the test when the text is accepted.
import { expect } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config/load.js';

export function problemOf(text: string, file = 'zp.yml'): string {
  try {
    parseConfig(text, file);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('config was accepted');
}
