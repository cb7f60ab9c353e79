// The built-in defaults without importing zod: importing it is a tenth of a CPU-second, most of what
// `report` spends before its first line (bench/RESULTS.md). `npm run build` writes defaultConfig() from the
// schema beside the compiled modules (default-config.json, with a hash of the compiled schema it came from);
// readDefaultConfig() uses that file only while the hash still matches schema.js, else it asks the schema.
// So a stale or missing file costs the tenth of a second back, never a wrong default.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Config } from './schema.js';

const JSON_URL = new URL('./default-config.json', import.meta.url);
const SCHEMA_URL = new URL('./schema.js', import.meta.url);

interface Stored {
  schemaSha256: string;
  config: unknown;
}

/** A RegExp as JSON (the config's one non-JSON value: headers.layerId.match). */
interface StoredRegExp {
  $regexp: string;
  flags: string;
}

export function sha256(url: URL): string {
  return createHash('sha256').update(readFileSync(url)).digest('hex');
}

/** The defaults as default-config.json stores them: RegExps as { $regexp, flags }. */
export function storedDefaults(config: Config, schemaSha256: string): string {
  return `${JSON.stringify({ schemaSha256, config } satisfies Stored, (_key, value: unknown) => (value instanceof RegExp ? ({ $regexp: value.source, flags: value.flags } satisfies StoredRegExp) : value), 2)}\n`;
}

/** The config stored by storedDefaults(), RegExps made again. */
export function revivedDefaults(text: string): { schemaSha256: string; config: Config } {
  const stored = JSON.parse(text, (_key, value: unknown) => {
    const r = value as Partial<StoredRegExp> | null;
    return r !== null && typeof r === 'object' && typeof r.$regexp === 'string' ? new RegExp(r.$regexp, r.flags) : value;
  }) as Stored;
  return { schemaSha256: stored.schemaSha256, config: stored.config as Config };
}

/** The built-in defaults: from default-config.json while it matches the compiled schema, else from the schema. */
export async function readDefaultConfig(json: URL = JSON_URL, schema: URL = SCHEMA_URL): Promise<Config> {
  try {
    const stored = revivedDefaults(readFileSync(json, 'utf8'));
    if (stored.schemaSha256 === sha256(schema)) return stored.config;
  } catch {
    // no file (the sources run directly, or a build without the step): the schema says
  }
  return (await import('./schema.js')).defaultConfig();
}

/** The build step (`npm run build`, after tsc): writes default-config.json beside the compiled schema. */
export async function writeDefaultConfig(): Promise<void> {
  const { defaultConfig } = await import('./schema.js');
  writeFileSync(fileURLToPath(JSON_URL), storedDefaults(defaultConfig(), sha256(SCHEMA_URL)));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await writeDefaultConfig();
