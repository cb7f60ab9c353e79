// The defaults `report` and `serve` start with when no config file is given come from default-config.json
// (written by `npm run build`, so zod is not imported): they must be exactly the schema's defaults, and a
// file that no longer matches the compiled schema must be ignored rather than trusted.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readDefaultConfig, revivedDefaults, sha256, storedDefaults } from '../../../src/config/default-config.js';
import { defaultConfig } from '../../../src/config/schema.js';
import { tempDir } from '../../helpers/temp-dir.js';

const DIST = join(import.meta.dirname, '..', '..', '..', 'dist', 'config');

describe('default-config.json', () => {
  it('stores the schema defaults exactly, RegExps included', () => {
    const { config, schemaSha256 } = revivedDefaults(storedDefaults(defaultConfig(), 'h'));
    expect(schemaSha256).toBe('h');
    expect(config).toStrictEqual(defaultConfig());
    expect(config.headers.layerId.match).toBeInstanceOf(RegExp);
  });

  it('the file the build wrote matches the compiled schema and holds its defaults', async () => {
    const stored = revivedDefaults(readFileSync(join(DIST, 'default-config.json'), 'utf8'));
    expect(stored.schemaSha256).toBe(sha256(pathToFileURL(join(DIST, 'schema.js'))));
    expect(stored.config).toStrictEqual(defaultConfig());
    expect(await readDefaultConfig(pathToFileURL(join(DIST, 'default-config.json')), pathToFileURL(join(DIST, 'schema.js')))).toStrictEqual(defaultConfig());
  });

  it('a file made from another schema, or none, is not used: the schema gives the defaults', async () => {
    const dir = tempDir('zp-default-config-');
    const schema = join(dir, 'schema.js');
    writeFileSync(schema, '// another build of the schema\n');
    const stale = join(dir, 'stale.json');
    const changed = { ...defaultConfig(), window: { ...defaultConfig().window, duration: 1 } };
    writeFileSync(stale, storedDefaults(changed, 'not the hash of schema.js'));
    expect(await readDefaultConfig(pathToFileURL(stale), pathToFileURL(schema))).toStrictEqual(defaultConfig());
    // The same file with the right hash is used as it is (so the test above could tell the difference).
    writeFileSync(stale, storedDefaults(changed, sha256(pathToFileURL(schema))));
    expect((await readDefaultConfig(pathToFileURL(stale), pathToFileURL(schema))).window.duration).toBe(1);
    expect(await readDefaultConfig(pathToFileURL(join(dir, 'missing.json')), pathToFileURL(schema))).toStrictEqual(defaultConfig());
  });
});
