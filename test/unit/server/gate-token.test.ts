// Reading a bearer token file (the gate's and the ingest's share the reader).
import { writeFileSync } from 'node:fs';
import { tempDir } from '../../helpers/temp-dir.js';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readBearerTokenFile as readTokenFile } from '../../../src/server/bearer-token.js';

const readBearerTokenFile = (path: string) => readTokenFile(path, 'gate');

describe('readBearerTokenFile', () => {
  const dir = tempDir('zp-gate-token-');

  it('returns the token without the trailing newline', async () => {
    const path = join(dir, 'token');
    writeFileSync(path, 's3cr3t\n');
    expect(await readBearerTokenFile(path)).toBe('s3cr3t');
    writeFileSync(path, 's3cr3t\r\n');
    expect(await readBearerTokenFile(path)).toBe('s3cr3t');
    writeFileSync(path, 's3cr3t');
    expect(await readBearerTokenFile(path)).toBe('s3cr3t');
  });

  it('names the file when it cannot be read', async () => {
    const path = join(dir, 'missing');
    await expect(readBearerTokenFile(path)).rejects.toThrow(new RegExp(`token file ${path}: cannot read: ENOENT`));
  });

  it('names the file when it is not a regular file (root can read anything, so no EACCES case)', async () => {
    await expect(readBearerTokenFile(dir)).rejects.toThrow(new RegExp(`token file ${dir}: not a regular file \\(a directory\\)`));
  });

  it('refuses an empty file or one with more than a token', async () => {
    const empty = join(dir, 'empty');
    writeFileSync(empty, '\n');
    await expect(readBearerTokenFile(empty)).rejects.toThrow(`the gate bearer token file ${empty} is empty`);
    const two = join(dir, 'two');
    writeFileSync(two, 'one\ntwo\n');
    await expect(readBearerTokenFile(two)).rejects.toThrow(two);
  });
});
