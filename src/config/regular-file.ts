// Reads a file a config names (the config itself, TLS material, a token): a regular file of bounded size,
// or a clear error. Without the check, `key_file: /dev/zero` reads until the heap runs out (6.5 GB, then
// an abort) and a FIFO blocks start-up forever; a config path never legitimately names either.
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { fileKind } from '../source/file-kind.js';

/**
 * Config files, certificates with their chains and token files are kilobytes; 1 MiB leaves room for a
 * large CA bundle and still bounds what a wrong path can make us hold.
 */
export const MAX_CONFIG_FILE_BYTES = 1024 * 1024;

/** Why a path cannot be read as a config file; `message` names no path (callers put it in context). */
export class RegularFileError extends Error {
  constructor(
    readonly path: string,
    message: string,
    options?: { cause: unknown },
  ) {
    super(message, options);
    this.name = 'RegularFileError';
  }
}

/**
 * The text of `path`, which must be a regular file (symlinks to one are fine: Kubernetes mounts Secrets
 * that way) of at most `maxBytes`. Opened non-blocking, so a FIFO is refused instead of waiting for a
 * writer; the size is checked on the open descriptor and again while reading, so a file that grows in
 * between cannot get past the bound.
 */
export function readRegularFile(path: string, maxBytes = MAX_CONFIG_FILE_BYTES): string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (err) {
    throw new RegularFileError(path, `cannot read: ${(err as Error).message}`, { cause: err });
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new RegularFileError(path, `not a regular file (${fileKind(stat)}): give the path of a file`);
    if (stat.size > maxBytes) throw new RegularFileError(path, `${stat.size} bytes, more than the ${maxBytes} a config file may have`);
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
      if (length > maxBytes) throw new RegularFileError(path, `grew past the ${maxBytes} bytes a config file may have while it was read`);
    }
    return buffer.toString('utf8', 0, length);
  } catch (err) {
    if (err instanceof RegularFileError) throw err;
    throw new RegularFileError(path, `cannot read: ${(err as Error).message}`, { cause: err });
  } finally {
    closeSync(fd);
  }
}
