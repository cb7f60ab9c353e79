// Validation of the client's options: a wrong option is a clear error when the application starts (the
// only time the client throws on its own account), naming the option and what is wrong with it.
import { z } from 'zod';
import { parseDuration } from '../config/duration.js';
import { configSchema, type Config } from '../config/schema.js';
import { describeIssues } from '../simulate/profile.js';

/** A duration option: milliseconds as a number, or a Prometheus-style string ("250ms", "5s", "1m"). */
export const durationOption = z.union([z.number().positive().finite(), z.string()]).transform((v, ctx) => {
  const ms = typeof v === 'number' ? v : parseDuration(v);
  if (ms === undefined || ms <= 0) {
    ctx.addIssue({ code: 'custom', message: `"${String(v)}" is not a duration: milliseconds, or a string such as 250ms, 5s or 1m` });
    return z.NEVER;
  }
  return ms;
});

export const warnOption = z.custom<(message: string) => void>((v) => typeof v === 'function', 'expected a function (message: string) => void');

export const fetchOption = z.custom<(input: string | URL | Request, init?: RequestInit) => Promise<Response>>((v) => typeof v === 'function', 'expected a fetch function');

export class ClientOptionsError extends Error {
  constructor(what: string, detail: string) {
    super(`${what}: ${detail}`);
    this.name = 'ClientOptionsError';
  }
}

/** Options parsed by `schema`, or a ClientOptionsError naming each bad one. */
export function parseOptions<S extends z.ZodType>(what: string, schema: S, input: unknown): z.output<S> {
  const parsed = schema.safeParse(input ?? {});
  if (!parsed.success) throw new ClientOptionsError(what, describeIssues(parsed.error));
  return parsed.data;
}

/** The exporter's config, as its YAML would give it (same keys, same defaults), for the client's side. */
export type ConfigInput = z.input<typeof configSchema>;

export function clientConfig(what: string, input: ConfigInput | undefined): Config {
  const parsed = configSchema.safeParse(input ?? {});
  if (!parsed.success)
    throw new ClientOptionsError(
      what,
      describeIssues(parsed.error).replace(/^|; /g, (sep) => `${sep}config.`),
    );
  return parsed.data;
}

export const defaultWarn = (message: string): void => {
  process.emitWarning(message, { code: 'ZERO_PLANE_CLIENT' });
};
