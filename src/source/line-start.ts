// Where to begin reading inside a file (from its end, past a catch-up cap) so the first line delivered is whole.
import type { FollowerHandle } from './follower-fs.js';

const LF = 0x0a;

/**
 * The first line start at or after `target` (0, or just past a `\n`), looked for before `limit`; undefined
 * when there is none there.
 */
export async function nextLineStart(fh: FollowerHandle, target: number, limit: number, buf: Buffer): Promise<number | undefined> {
  if (target <= 0) return 0;
  // The byte before the target: a `\n` there makes the target itself a line start.
  let pos = target - 1;
  while (pos < limit) {
    const { bytesRead } = await fh.read(buf, 0, Math.min(buf.length, limit - pos), pos);
    if (bytesRead === 0) return undefined;
    const nl = buf.subarray(0, bytesRead).indexOf(LF);
    if (nl !== -1) return pos + nl + 1;
    pos += bytesRead;
  }
  return undefined;
}

/**
 * Where the line being written at the end of a file begins, so following from
 * "the end" delivers that line whole instead of a fragment. A tail already
 * longer than the line limit starts just past the limit, so it is reported as oversize.
 */
export async function startOfLastLine(fh: FollowerHandle, size: number, maxLineBytes: number, buf: Buffer): Promise<number> {
  const floor = Math.max(0, size - (maxLineBytes + 2));
  let end = size;
  while (end > floor) {
    const len = Math.min(buf.length, end - floor);
    const start = end - len;
    const { bytesRead } = await fh.read(buf, 0, len, start);
    const nl = buf.subarray(0, bytesRead).lastIndexOf(LF);
    if (nl !== -1) return start + nl + 1;
    end = start;
  }
  return floor;
}
