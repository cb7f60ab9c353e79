// Names what a path is in error messages: config files, followed sources and checkpoints all refuse
// what is not a regular file, and each says what it found.
import type { Stats } from 'node:fs';

/** What a path is, in words for an error message ("a FIFO"); lstat() results name links too. */
export function fileKind(stat: Stats): string {
  if (stat.isFile()) return 'a regular file';
  if (stat.isDirectory()) return 'a directory';
  if (stat.isFIFO()) return 'a FIFO';
  if (stat.isSymbolicLink()) return 'a symbolic link (give the path of the file itself)';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  return 'a special file';
}
