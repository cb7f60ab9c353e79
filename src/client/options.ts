// Validation of the client's options: a wrong option is a clear error when the application starts (the
// only time the client throws on its own account), naming the option and what is wrong with it. Written
// out by hand, not with zod: zod alone is ~100 ms and ~14 MB at import, more than the rest of the client,
// for a dozen options (issue 26: the client must weigh almost nothing).
import { parseDuration } from '../config/duration.js';

export class ClientOptionsError extends Error {
  constructor(what: string, detail: string) {
    super(`${what}: ${detail}`);
    this.name = 'ClientOptionsError';
  }
}

/**
 * Reads one options object, collecting every problem as "path: message" (all of them, not only the
 * first), then throws them together as one ClientOptionsError naming the function.
 */
export class OptionReader {
  private readonly issues: string[] = [];

  constructor(private readonly what: string) {}

  /** Records a problem at `path`; the value read is then undefined (the caller goes on to find the next). */
  fail(path: string, message: string): undefined {
    this.issues.push(`${path === '' ? '(options)' : path}: ${message}`);
    return undefined;
  }

  /** Throws the problems found, if any. */
  done(): void {
    if (this.issues.length > 0) throw new ClientOptionsError(this.what, this.issues.join('; '));
  }

  /** A plain object with only `keys` (absent: {}), or undefined after a problem. */
  object(value: unknown, path: string, keys: readonly string[]): Record<string, unknown> | undefined {
    if (value === undefined) return {};
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return this.fail(path, `expected an object, got ${kindOf(value)}`);
    const unknown = Object.keys(value).filter((k) => !keys.includes(k));
    if (unknown.length > 0) return this.fail(path, `unknown key${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => JSON.stringify(k)).join(', ')} (known: ${keys.join(', ')})`);
    return value as Record<string, unknown>;
  }

  /** A finite number within the bounds (absent: `fallback`). */
  number(value: unknown, path: string, fallback: number | undefined, b: Bounds = {}): number | undefined {
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isFinite(value)) return this.fail(path, `expected a finite number, got ${kindOf(value)}`);
    if (b.int === true && !Number.isSafeInteger(value)) return this.fail(path, `expected an integer, got ${value}`);
    if (b.gt !== undefined && !(value > b.gt)) return this.fail(path, `must be greater than ${b.gt}, got ${value}`);
    if (b.min !== undefined && value < b.min) return this.fail(path, `must be at least ${b.min}, got ${value}`);
    if (b.max !== undefined && value > b.max) return this.fail(path, `must be at most ${b.max}, got ${value}`);
    return value;
  }

  string(value: unknown, path: string, fallback: string | undefined, rule?: { pattern: RegExp; means: string }): string | undefined {
    if (value === undefined) return fallback;
    if (typeof value !== 'string') return this.fail(path, `expected a string, got ${kindOf(value)}`);
    if (rule !== undefined && !rule.pattern.test(value)) return this.fail(path, `${JSON.stringify(value)} is not ${rule.means}`);
    return value;
  }

  boolean(value: unknown, path: string, fallback: boolean | undefined): boolean | undefined {
    if (value === undefined) return fallback;
    if (typeof value !== 'boolean') return this.fail(path, `expected true or false, got ${kindOf(value)}`);
    return value;
  }

  oneOf<T extends string>(value: unknown, path: string, fallback: T, choices: readonly T[]): T | undefined {
    if (value === undefined) return fallback;
    if (typeof value !== 'string' || !(choices as readonly string[]).includes(value))
      return this.fail(path, `expected one of ${choices.map((c) => JSON.stringify(c)).join(', ')}, got ${describe(value)}`);
    return value as T;
  }

  /** A client-side duration: milliseconds as a number, or a Prometheus-style string ("250ms", "5s", "1m"). */
  duration(value: unknown, path: string, fallback: number): number | undefined;
  duration(value: unknown, path: string, fallback: undefined): number | undefined;
  duration(value: unknown, path: string, fallback: number | undefined): number | undefined {
    if (value === undefined) return fallback;
    const ms = typeof value === 'number' ? value : typeof value === 'string' ? parseDuration(value) : undefined;
    if (ms === undefined || !Number.isFinite(ms) || ms <= 0) return this.fail(path, `${describe(value)} is not a duration: milliseconds, or a string such as 250ms, 5s or 1m`);
    return ms;
  }

  /** An http(s) URL, as given. */
  httpUrl(value: unknown, path: string): string | undefined {
    if (value === undefined) return this.fail(path, 'required: an http(s) URL');
    if (typeof value !== 'string') return this.fail(path, `Invalid URL: expected an http(s) URL string, got ${kindOf(value)}`);
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return this.fail(path, `Invalid URL: ${JSON.stringify(value)}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return this.fail(path, `Invalid URL: ${JSON.stringify(value)} is not http(s)`);
    return value;
  }

  /** An object of string values (request headers, say), each key passing `key` when given. */
  stringRecord(value: unknown, path: string, key?: { pattern: RegExp; means: string }, item?: { pattern: RegExp; means: string }): Record<string, string> | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return this.fail(path, `expected an object of strings, got ${kindOf(value)}`);
    let ok = true;
    for (const [k, v] of Object.entries(value)) {
      const problem =
        key !== undefined && !key.pattern.test(k)
          ? `the key ${JSON.stringify(k)} is not ${key.means}`
          : typeof v !== 'string'
            ? `expected a string, got ${kindOf(v)}`
            : item !== undefined && !item.pattern.test(v)
              ? `${JSON.stringify(v)} is not ${item.means}`
              : undefined;
      if (problem === undefined) continue;
      this.fail(`${path}.${k}`, problem);
      ok = false;
    }
    return ok ? (value as Record<string, string>) : undefined;
  }

  func<F>(value: unknown, path: string, means: string): F | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== 'function') return this.fail(path, `expected ${means}, got ${kindOf(value)}`);
    return value as F;
  }
}

export interface Bounds {
  int?: boolean;
  /** Exclusive lower bound. */
  gt?: number;
  min?: number;
  max?: number;
}

/** `path.key`, or `key` at the top. */
export function at(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  return typeof value === 'object' ? 'an object' : typeof value === 'string' ? 'a string' : `a ${typeof value}`;
}

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : typeof value === 'number' ? String(value) : kindOf(value);
}

export const defaultWarn = (message: string): void => {
  process.emitWarning(message, { code: 'ZERO_PLANE_CLIENT' });
};
