// The bearer token Alertmanager must present to the webhook, read once at start-up.
import { readFile } from 'node:fs/promises';
import { errorMessage } from '../source/fs-error-reason.js';

/**
 * Reads the token file; surrounding whitespace (the trailing newline editors and `echo` add) is
 * trimmed, as Alertmanager does for its own `credentials_file`, so one file serves both sides.
 * Throws an Error naming the file when it cannot be read, is empty, or holds more than one word.
 */
export async function readBearerTokenFile(path: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new Error(`cannot read the gate bearer token file ${path}: ${errorMessage(err)}`, { cause: err });
  }
  const token = text.trim();
  if (token === '') throw new Error(`the gate bearer token file ${path} is empty`);
  if (/[\s\x00-\x1f\x7f]/.test(token)) throw new Error(`the gate bearer token file ${path} must hold one token: no spaces, line breaks or control characters`);
  return token;
}
