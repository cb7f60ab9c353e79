// One probe: a minimal `/v1/messages` request (max_tokens 1, the exact opt-in header) through the real
// Anthropic SDK, and what its answer says, read with the same classifier the exporter reads gateway logs with.
import type { Config } from '../config/schema.js';
import type { ProbeModule } from '../config/probe-schema.js';
import { readRegularFile } from '../config/regular-file.js';
import type { GatewayRecord } from '../record/parse-record.js';
import { SignalClassifier } from '../signals/classify.js';
import { classifyOptIn, type OptInDefect, type OptInState } from '../signals/opt-in.js';
import { versionBelow, type LoadedSdk } from './sdk.js';

export interface ProbeResult {
  module: string;
  target: string;
  model: string;
  /** HTTP 2xx, served by Zero-Plane, and (with failIfDegraded) not degraded. */
  success: boolean;
  layerHit: boolean;
  /** An answer came (any status), not from the Zero-Plane layer. */
  fallback: boolean;
  durationSeconds: number;
  /** null: no answer (timeout, connection refused, ...). */
  httpStatus: number | null;
  layerId: string | null;
  degraded: boolean;
  /** Only for a Zero-Plane answer, as the exporter counts warm-up. */
  warmup: 'hit' | 'miss' | null;
  mode: 'strict' | 'balanced' | 'adaptive' | null;
  /** The raw delay-profile header; delayProfileInvalid when it is not a structured-field Dictionary. */
  delayProfile: string | null;
  delayProfileInvalid: boolean;
  downgradeReason: string | null;
  cached: boolean;
  /** The opt-in header that was sent, classified as the exporter classifies a logged one. */
  optIn: { state: OptInState; defect: OptInDefect | null };
  /** Why there was no answer, or the API's error message. */
  error: string | null;
  sdk: { name: string; version: string; minimum: string | null; outdated: boolean };
  warnings: string[];
  /** When the request was sent (RFC 3339). */
  at: string;
}

/** A module that cannot probe (no key file, an unreadable one): a config problem, not a probe failure. */
export class ProbeSetupError extends Error {
  constructor(
    readonly key: string,
    message: string,
  ) {
    super(`${key}: ${message}`);
    this.name = 'ProbeSetupError';
  }
}

/** The API key of module `name`, read from its file now (a rotated key is picked up at the next probe). */
export function readApiKey(name: string, module: ProbeModule): string {
  const key = `probe.modules.${name}.apiKeyFile`;
  if (module.apiKeyFile === undefined) throw new ProbeSetupError(key, 'unset: the probe reads its API key from a file (docs/probe.md)');
  let text: string;
  try {
    text = readRegularFile(module.apiKeyFile);
  } catch (err) {
    throw new ProbeSetupError(key, `${module.apiKeyFile}: ${(err as Error).message}`);
  }
  const apiKey = text.trim();
  if (apiKey === '') throw new ProbeSetupError(key, `${module.apiKeyFile} is empty`);
  if (/[\s\x00-\x1f\x7f]/.test(apiKey)) throw new ProbeSetupError(key, `${module.apiKeyFile} must hold one key: no spaces, line breaks or control characters`);
  return apiKey;
}

/** The request headers a module sends: its own, plus the exact opt-in header unless it names that header itself. */
export function probeHeaders(config: Config, module: ProbeModule): Record<string, string> {
  const optIn = config.headers.optIn;
  const own = Object.keys(module.headers).some((h) => h.toLowerCase() === optIn.name.toLowerCase());
  return own ? { ...module.headers } : { ...module.headers, [optIn.name]: optIn.value };
}

export interface ProbeRequest {
  config: Config;
  name: string;
  module: ProbeModule;
  /** The base URL the SDK is given. */
  target: string;
  apiKey: string;
  sdk: LoadedSdk;
}

const MAX_LABEL_TEXT = 128;

export async function sendProbe(r: ProbeRequest): Promise<ProbeResult> {
  const { config, module, sdk } = r;
  const classifier = new SignalClassifier(config.headers);
  const headers = probeHeaders(config, module);
  const sentOptIn = Object.entries(headers).find(([h]) => h.toLowerCase() === config.headers.optIn.name.toLowerCase())?.[1];
  // maxRetries 0: one probe is one request, never three on a 429 or a timeout (the API budget).
  const client = new sdk.Anthropic({ apiKey: r.apiKey, baseURL: r.target, timeout: module.timeout, maxRetries: 0 });
  const params = { model: module.model, max_tokens: 1, messages: [{ role: 'user' as const, content: module.prompt }], ...(module.system === '' ? {} : { system: module.system }) };
  const at = new Date().toISOString();
  const started = performance.now();
  let status: number | null = null;
  let responseHeaders: Headers | undefined;
  let error: string | null = null;
  try {
    const { response } = await client.messages.create(params, { headers }).withResponse();
    status = response.status;
    responseHeaders = response.headers;
  } catch (err) {
    if (err instanceof sdk.APIError && typeof err.status === 'number') {
      status = err.status;
      responseHeaders = err.headers;
      error = err.apiMessage ?? err.message;
    } else {
      error = (err as Error).message;
    }
  }
  const durationSeconds = (performance.now() - started) / 1000;
  const wanted = classifier.responseHeaderNames;
  const picked: Record<string, string> = {};
  for (const h of wanted) {
    const v = responseHeaders?.get(h);
    if (v !== null && v !== undefined) picked[h] = v;
  }
  const record: GatewayRecord = {
    timeMs: Date.parse(at),
    latencySeconds: durationSeconds,
    status: status ?? undefined,
    model: module.model,
    route: '',
    cohort: '',
    responseHeaders: picked,
    requestHeaders: sentOptIn === undefined ? {} : { [config.headers.optIn.name.toLowerCase()]: sentOptIn },
  };
  const s = classifier.classify(record);
  const optIn = classifyOptIn(sentOptIn, config.headers.optIn.value);
  const minimum = config.probe.minimumSdkVersion ?? null;
  const outdated = minimum !== null && versionBelow(sdk.version, minimum);
  const warnings: string[] = [];
  if (outdated) warnings.push(`${sdk.name} ${sdk.version} is older than ${minimum} (probe.minimumSdkVersion): older SDKs may drop the opt-in header, and a silent fall-back looks like success`);
  if (optIn.state !== 'valid')
    warnings.push(
      `the opt-in header sent is ${optIn.state}${optIn.defect === undefined ? '' : ` (${optIn.defect})`}: probe.modules.${r.name}.headers replaces the exact ${config.headers.optIn.name}: ${config.headers.optIn.value}`,
    );
  const ok = status !== null && status >= 200 && status < 300;
  const layerId = picked[config.headers.layerId.name.toLowerCase()] ?? null;
  const downgrade = picked[config.headers.downgradeReason.name.toLowerCase()];
  return {
    module: r.name,
    target: r.target,
    model: module.model,
    success: ok && s.hit && !(module.failIfDegraded && s.degraded),
    layerHit: s.hit,
    fallback: status !== null && !s.hit,
    durationSeconds,
    httpStatus: status,
    layerId,
    degraded: s.degraded,
    warmup: s.warmup ?? null,
    mode: s.mode ?? null,
    delayProfile: picked[config.headers.delayProfile.name.toLowerCase()] ?? null,
    delayProfileInvalid: s.delayProfileInvalid,
    downgradeReason: downgrade === undefined ? null : downgrade.slice(0, MAX_LABEL_TEXT),
    cached: s.cached,
    optIn: { state: optIn.state, defect: optIn.defect ?? null },
    error,
    sdk: { name: sdk.name, version: sdk.version, minimum, outdated },
    warnings,
    at,
  };
}
