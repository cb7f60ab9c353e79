// Which sibling names a rotation gives, and how they order: what rotation recovery reads a generation by.
import { describe, expect, it } from 'vitest';
import { numberedIndex, numberedName, sameScheme } from '../../../src/source/rotation-family.js';

describe('rotation naming schemes', () => {
  it('numbered generations, whatever their depth, and only those', () => {
    expect(numberedIndex('app.log.1', 'app.log')).toBe(1);
    expect(numberedIndex('app.log.12', 'app.log')).toBe(12);
    expect(numberedIndex('app.1.log', 'app.log')).toBe(1); // logrotate `extension .log`
    expect(numberedIndex('app2.log.3', 'app2.log')).toBe(3); // digits in the base are not a number
    expect(numberedIndex('app.log-20240101', 'app.log')).toBeUndefined(); // a date
    expect(numberedIndex('app.log.01', 'app.log')).toBeUndefined();
    expect(numberedName('app.log.3', 'app.log', 1)).toBe('app.log.1');
    expect(numberedName('app.3.log', 'app.log', 2)).toBe('app.2.log');
    expect(numberedName('app2.log.3', 'app2.log', 1)).toBe('app2.log.1');
  });

  it('a sibling is of the scheme of the file rotated before it, or of none', () => {
    expect(sameScheme('app.log.1', 'app.log.3', 'app.log')).toBe(true);
    expect(sameScheme('app.log.10', 'app.log.3', 'app.log')).toBe(true);
    expect(sameScheme('app.log-20240102', 'app.log-20240101', 'app.log')).toBe(true);
    expect(sameScheme('app-2024-01-02.log', 'app-2024-01-01.log', 'app.log')).toBe(true);
    expect(sameScheme('app.log-1700000000', 'app.log-20240101', 'app.log')).toBe(false); // another format
    expect(sameScheme('app.log-20240101', 'app.log.3', 'app.log')).toBe(false); // another scheme
    for (const unrelated of ['app.log-canary', 'app.log.count', 'app.log.1.bak', 'app.log.1.gz', 'app.log.3', 'app.logger.1', 'other.log.1']) {
      expect([unrelated, sameScheme(unrelated, 'app.log.3', 'app.log')]).toEqual([unrelated, false]);
    }
  });
});
