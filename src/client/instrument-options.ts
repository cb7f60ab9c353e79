// instrumentFetch()'s options, checked when the application starts (options.ts): every default written
// once, here, and every problem named with its path (`instrumentFetch: to.ingest.url: Invalid URL: …`).
import { readClientConfig, type ClientConfig } from './client-config.js';
import { at, OptionReader } from './options.js';

export interface ParsedIngest {
  url: string;
  bearerToken: string | undefined;
  headers: Record<string, string> | undefined;
  batchRecords: number;
  flushInterval: number;
  maxPendingRecords: number;
  maxAttempts: number;
  timeout: number;
}

export type ParsedDestination = 'in-process' | { logFile: string; maxPendingRecords: number } | { ingest: ParsedIngest };

export interface ParsedInstrumentOptions {
  optIn: 'report' | 'repair' | 'reject';
  genAi: { provider: string; operations: Record<string, string> };
  observeBodies: false | { maxJsonBytes: number; maxWait: number };
  to: ParsedDestination;
  config: ClientConfig;
  cohort: string | undefined;
  closeTimeout: number;
  handleSignals: boolean;
  warn: ((message: string) => void) | undefined;
  promptHash: boolean | { header: boolean | string; key: string | undefined };
}

const GENAI_NAME = /^[a-z][a-z0-9_.]{0,63}$/;
const OPTION_KEYS = ['optIn', 'genAi', 'observeBodies', 'to', 'config', 'cohort', 'closeTimeout', 'handleSignals', 'warn', 'promptHash'] as const;

/** instrumentFetch()'s options (an InstrumentOptions, or whatever a JavaScript caller gave) with every default filled in; throws a ClientOptionsError naming each bad one. */
export function parseInstrumentOptions(input: unknown): ParsedInstrumentOptions {
  const r = new OptionReader('instrumentFetch');
  const o = r.object(input ?? {}, '', OPTION_KEYS) ?? {};
  const parsed = {
    optIn: r.oneOf(o.optIn, 'optIn', 'report', ['report', 'repair', 'reject'] as const),
    genAi: genAi(r, o.genAi),
    observeBodies: observeBodies(r, o.observeBodies),
    to: destination(r, o.to),
    config: readClientConfig(r, o.config),
    cohort: o.cohort === '' ? r.fail('cohort', 'must not be empty (leave it out for no cohort)') : r.string(o.cohort, 'cohort', undefined),
    closeTimeout: r.duration(o.closeTimeout, 'closeTimeout', 5_000),
    handleSignals: r.boolean(o.handleSignals, 'handleSignals', false),
    warn: r.func<(message: string) => void>(o.warn, 'warn', 'a function (message: string) => void'),
    promptHash: promptHash(r, o.promptHash),
  };
  r.done();
  // done() threw unless every value was read; the optional ones may be undefined.
  return parsed as ParsedInstrumentOptions;
}

function genAi(r: OptionReader, value: unknown): ParsedInstrumentOptions['genAi'] | undefined {
  const g = r.object(value, 'genAi', ['provider', 'operations']);
  if (g === undefined) return undefined;
  const provider = r.string(g.provider, 'genAi.provider', 'anthropic', { pattern: GENAI_NAME, means: 'a gen_ai.provider.name such as anthropic or aws.bedrock' });
  const operations =
    g.operations === undefined
      ? { '/v1/messages': 'chat', '/v1/complete': 'text_completion' }
      : r.stringRecord(
          g.operations,
          'genAi.operations',
          { pattern: /^\//, means: 'a route (starting with /)' },
          { pattern: GENAI_NAME, means: 'a GenAI operation name such as chat or text_completion' },
        );
  return provider === undefined || operations === undefined ? undefined : { provider, operations };
}

function observeBodies(r: OptionReader, value: unknown): ParsedInstrumentOptions['observeBodies'] | undefined {
  if (value === false) return false;
  if (value === true) return r.fail('observeBodies', 'expected false or { maxJsonBytes, maxWait }, got true (leave it out to observe bodies)');
  const b = r.object(value, 'observeBodies', ['maxJsonBytes', 'maxWait']);
  if (b === undefined) return undefined;
  const maxJsonBytes = r.number(b.maxJsonBytes, 'observeBodies.maxJsonBytes', 1024 * 1024, { int: true, min: 0 });
  const maxWait = r.duration(b.maxWait, 'observeBodies.maxWait', 600_000);
  return maxJsonBytes === undefined || maxWait === undefined ? undefined : { maxJsonBytes, maxWait };
}

function promptHash(r: OptionReader, value: unknown): ParsedInstrumentOptions['promptHash'] | undefined {
  if (value === undefined || typeof value === 'boolean') return value ?? false;
  const p = r.object(value, 'promptHash', ['header', 'key']);
  if (p === undefined) return undefined;
  const header =
    typeof p.header === 'string'
      ? r.string(p.header, 'promptHash.header', undefined, { pattern: /^[A-Za-z0-9-]{1,64}$/, means: 'an HTTP header name such as x-prompt-hash' })
      : r.boolean(p.header, 'promptHash.header', false);
  const key = p.key === '' ? r.fail('promptHash.key', 'must not be empty') : r.string(p.key, 'promptHash.key', undefined);
  return header === undefined ? undefined : { header, key };
}

function destination(r: OptionReader, value: unknown): ParsedDestination | undefined {
  if (value === undefined || value === 'in-process') return 'in-process';
  const shape = "expected 'in-process', { logFile } or { ingest: { url } }";
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return r.fail('to', `${shape}, got ${JSON.stringify(value) ?? typeof value}`);
  if ('ingest' in value) {
    const to = r.object(value, 'to', ['ingest']);
    return to === undefined ? undefined : ingest(r, to.ingest, 'to.ingest');
  }
  if (!('logFile' in value)) return r.fail('to', `${shape}, got an object with ${Object.keys(value).join(', ') || 'no keys'}`);
  const f = r.object(value, 'to', ['logFile', 'maxPendingRecords']);
  if (f === undefined) return undefined;
  const logFile = f.logFile === '' ? r.fail('to.logFile', 'must not be empty') : r.string(f.logFile, 'to.logFile', undefined);
  const maxPendingRecords = r.number(f.maxPendingRecords, 'to.maxPendingRecords', 10_000, { int: true, min: 1 });
  return logFile === undefined || maxPendingRecords === undefined ? undefined : { logFile, maxPendingRecords };
}

function ingest(r: OptionReader, value: unknown, path: string): ParsedDestination | undefined {
  if (value === undefined) return r.fail(path, 'required: { url } of a running exporter');
  const i = r.object(value, path, ['url', 'bearerToken', 'headers', 'batchRecords', 'flushInterval', 'maxPendingRecords', 'maxAttempts', 'timeout']);
  if (i === undefined) return undefined;
  const out = {
    url: r.httpUrl(i.url, at(path, 'url')),
    bearerToken: i.bearerToken === '' ? r.fail(at(path, 'bearerToken'), 'must not be empty') : r.string(i.bearerToken, at(path, 'bearerToken'), undefined),
    headers: r.stringRecord(i.headers, at(path, 'headers')),
    batchRecords: r.number(i.batchRecords, at(path, 'batchRecords'), 500, { int: true, min: 1, max: 100_000 }),
    flushInterval: r.duration(i.flushInterval, at(path, 'flushInterval'), 1_000),
    maxPendingRecords: r.number(i.maxPendingRecords, at(path, 'maxPendingRecords'), 10_000, { int: true, min: 1 }),
    maxAttempts: r.number(i.maxAttempts, at(path, 'maxAttempts'), 5, { int: true, min: 1, max: 100 }),
    timeout: r.duration(i.timeout, at(path, 'timeout'), 10_000),
  };
  return { ingest: out as ParsedIngest };
}
