// Where files are, by identity, in the directories the follower looks into: built once per directory
// and poll, so finding many moved files (a restart after thousands of files rotated, closed files that
// rotated) costs one listing and one stat per entry, not one per file looked for.
import { join } from 'node:path';
import { identity } from './file-identity.js';
import { nodeFs, type FollowerFs } from './follower-fs.js';

export class DirectoryIndex {
  private readonly dirs = new Map<string, Promise<Map<string, string[]>>>();

  constructor(private readonly fs: FollowerFs = nodeFs) {}

  /** Forgets every listing (at the start of a poll: files move between polls). */
  clear(): void {
    this.dirs.clear();
  }

  /** The paths in `dir` of regular files with identity `key`, sorted. */
  async pathsOf(dir: string, key: string): Promise<string[]> {
    let listing = this.dirs.get(dir);
    if (listing === undefined) {
      listing = list(dir, this.fs);
      this.dirs.set(dir, listing);
    }
    return (await listing).get(key) ?? [];
  }
}

async function list(dir: string, fs: FollowerFs): Promise<Map<string, string[]>> {
  const byKey = new Map<string, string[]>();
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  for (const name of names.sort()) {
    const path = join(dir, name);
    // stat, never open: a FIFO would block a read open until it has a writer.
    const st = await fs.stat(path).catch(() => undefined);
    if (st === undefined || !st.isFile()) continue;
    const key = identity(st);
    const paths = byKey.get(key);
    if (paths === undefined) byKey.set(key, [path]);
    else paths.push(path);
  }
  return byKey;
}
