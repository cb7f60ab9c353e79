// What makes a file "the same file" to the follower: its inode (dev:ino) and the first bytes of its
// content. Inodes get reused (a deleted log's inode often goes to the next file created), and a file
// can be truncated and rewritten in place, so the inode alone is not enough.
import type { Stats } from 'node:fs';
import type { FollowerHandle } from './follower-fs.js';

/** How much of a file's start is compared: the fingerprint is its first min(size, 1 KiB) bytes. */
export const FINGERPRINT_BYTES = 1024;

export function identity(st: Pick<Stats, 'dev' | 'ino'>): string {
  return `${st.dev}:${st.ino}`;
}

/** Reads the first min(size, FINGERPRINT_BYTES) bytes into `into` (at least that long); returns them as a view of it. */
export async function readHead(fh: FollowerHandle, into: Buffer): Promise<Buffer> {
  let len = 0;
  while (len < FINGERPRINT_BYTES) {
    const { bytesRead } = await fh.read(into, len, FINGERPRINT_BYTES - len, len);
    if (bytesRead === 0) break;
    len += bytesRead;
  }
  return into.subarray(0, len);
}

/** A copy that owns its memory (not a view of a shared or pooled buffer), for keeping. */
export function keep(head: Buffer): Buffer {
  const out = Buffer.alloc(head.length);
  head.copy(out);
  return out;
}

/**
 * Whether two fingerprints can belong to the same content: the shorter is a prefix of the longer.
 * A file that is still shorter than the fingerprint grows into it, so a prefix is not a mismatch.
 */
export function sameStart(a: Buffer, b: Buffer): boolean {
  const n = Math.min(a.length, b.length);
  return a.compare(b, 0, n, 0, n) === 0;
}

const COMPRESSED_MAGIC = [
  Buffer.from([0x1f, 0x8b]), // gzip
  Buffer.from('BZh'), // bzip2
  Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]), // xz
  Buffer.from([0x28, 0xb5, 0x2f, 0xfd]), // zstd
  Buffer.from([0x04, 0x22, 0x4d, 0x18]), // lz4
];

/** Starts as a compressed file does (gzip, bzip2, xz, zstd, lz4): a rotated log already compressed. */
export function looksCompressed(head: Buffer): boolean {
  return COMPRESSED_MAGIC.some((m) => head.length >= m.length && head.subarray(0, m.length).equals(m));
}

/** A compressed or binary file (a rotated log already compressed): never read as log lines. */
export function looksBinary(head: Buffer): boolean {
  return head.includes(0) || looksCompressed(head);
}

interface Known {
  head: Buffer;
  offset: number;
}

/**
 * Files the follower read and let go of while they still exist (renamed away, an old symlink target,
 * a rotated copy), with how far they were read, so that one coming back into view resumes where it
 * stopped instead of being read again. Bounded: the oldest entries are forgotten first.
 */
export class KnownFiles {
  private readonly entries = new Map<string, Known>();

  constructor(private readonly capacity = 1024) {}

  get size(): number {
    return this.entries.size;
  }

  remember(key: string, head: Buffer, offset: number): void {
    this.entries.delete(key);
    this.entries.set(key, { head: keep(head), offset });
    if (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  /**
   * How far the file with this identity, fingerprint and size was read, if it is the file remembered.
   * The same dev:ino with another fingerprint is a reused inode, and a file now shorter than what was
   * read has been truncated: either way a new file, and the entry is dropped. So is a file that is now
   * compressed and was not: a file remembered empty (fingerprint empty, a prefix of anything) whose inode
   * went to a .gz made later would otherwise pass for itself grown, and be read from 0 as lines.
   */
  offsetOf(key: string, head: Buffer, size: number): number | undefined {
    const k = this.entries.get(key);
    if (k === undefined) return undefined;
    if (sameStart(head, k.head) && size >= k.offset && (looksCompressed(k.head) || !looksCompressed(head))) return k.offset;
    this.entries.delete(key);
    return undefined;
  }

  /** Every entry, oldest first (for a checkpoint; `remember` them in this order to restore). */
  list(): Array<{ key: string; head: Buffer; offset: number }> {
    return [...this.entries].map(([key, k]) => ({ key, head: k.head, offset: k.offset }));
  }

  forget(key: string): void {
    this.entries.delete(key);
  }
}
