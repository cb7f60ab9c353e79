// `Authorization: Bearer <token>` checked in constant time, and the file the token is read from. Shared by
// the endpoints that take a token of their own (the gate's webhook, HTTP ingest).
import { createHash, timingSafeEqual } from 'node:crypto';
import { readRegularFile } from '../config/regular-file.js';
import { errorMessage } from '../source/fs-error-reason.js';

/** `missing`: no Authorization header at all; `wrong`: a header that is not this bearer token. */
export type BearerCheck = 'ok' | 'missing' | 'wrong';

export class BearerToken {
  private readonly expected: Buffer;

  constructor(token: string) {
    if (token === '') throw new Error('a bearer token must not be empty');
    this.expected = sha256(token);
  }

  /** Checks the value of an Authorization header (undefined when the request has none). */
  check(authorization: string | undefined): BearerCheck {
    if (authorization === undefined) return 'missing';
    const given = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization)?.[1];
    // Both sides hashed: equal lengths for timingSafeEqual, and no length leaks through timing.
    return given !== undefined && timingSafeEqual(sha256(given), this.expected) ? 'ok' : 'wrong';
  }
}

/**
 * Reads a token file; surrounding whitespace (the trailing newline editors and `echo` add) is trimmed,
 * as Prometheus and Alertmanager do for their own `credentials_file`, so one file serves both sides.
 * Throws an Error naming the file (and what it is for) when it cannot be read, is not a regular file of
 * bounded size (a device or FIFO would never end or never start), is empty, or holds more than one word.
 */
export async function readBearerTokenFile(path: string, purpose: string): Promise<string> {
  let text: string;
  try {
    text = readRegularFile(path);
  } catch (err) {
    throw new Error(`the ${purpose} bearer token file ${path}: ${errorMessage(err)}`, { cause: err });
  }
  const token = text.trim();
  if (token === '') throw new Error(`the ${purpose} bearer token file ${path} is empty`);
  if (/[\s\x00-\x1f\x7f]/.test(token)) throw new Error(`the ${purpose} bearer token file ${path} must hold one token: no spaces, line breaks or control characters`);
  return token;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}
