// The Anthropic SDK the probe sends through, loaded only when a probe runs. It is an optional dependency
// (package.json): `serve`, `report` and the client library never load it, and an install without it
// (`npm install --omit=optional`) still runs everything but the probe, which then says how to get it.
import type AnthropicClient from '@anthropic-ai/sdk';

export const SDK_NAME = '@anthropic-ai/sdk';

export interface LoadedSdk {
  Anthropic: typeof AnthropicClient;
  APIError: typeof AnthropicClient.APIError;
  name: string;
  version: string;
}

/** The SDK is not installed: the message says what to run. */
export class SdkMissingError extends Error {
  constructor(specifier: string, cause: unknown) {
    super(`the probe sends its request through ${specifier}, an optional dependency that is not installed here: run \`npm install ${specifier}\` beside zero-plane-exporter`, { cause });
    this.name = 'SdkMissingError';
  }
}

let loaded: Promise<LoadedSdk> | undefined;

/** The installed SDK, its name and version; `specifier` only for the test of the missing case. Throws SdkMissingError. */
export function loadSdk(specifier: string = SDK_NAME): Promise<LoadedSdk> {
  if (specifier !== SDK_NAME) return importSdk(specifier);
  loaded ??= importSdk(specifier).catch((err: unknown) => {
    loaded = undefined; // installed later: the next probe finds it
    throw err;
  });
  return loaded;
}

async function importSdk(specifier: string): Promise<LoadedSdk> {
  let sdk: { default: typeof AnthropicClient };
  let version: { VERSION: string };
  try {
    // Two specifiers, each a real module of the package (its exports map has no ./package.json).
    [sdk, version] = await Promise.all([import(specifier) as Promise<{ default: typeof AnthropicClient }>, import(`${specifier}/version`) as Promise<{ VERSION: string }>]);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND' || code === 'ERR_PACKAGE_PATH_NOT_EXPORTED') throw new SdkMissingError(specifier, err);
    throw err;
  }
  return { Anthropic: sdk.default, APIError: sdk.default.APIError, name: specifier, version: version.VERSION };
}

/** Whether `version` (x.y.z, a pre-release suffix ignored) is below `minimum` (x.y.z). */
export function versionBelow(version: string, minimum: string): boolean {
  const parts = (v: string) => (/^(\d+)\.(\d+)\.(\d+)/.exec(v) ?? []).slice(1).map(Number);
  const a = parts(version);
  const b = parts(minimum);
  if (a.length !== 3 || b.length !== 3) return false;
  for (let i = 0; i < 3; i++) if ((a[i] as number) !== (b[i] as number)) return (a[i] as number) < (b[i] as number);
  return false;
}
