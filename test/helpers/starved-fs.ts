// The follower's file-system calls, with a hook before each one: a test stalls the follower there, slows
// the call, or lets the writer and the rotator move on (rename, shift, truncate, compress, delete) at that
// exact step. What a starved machine does by luck (a rotation between a stat and the open after it, a
// shift in the middle of a directory walk), this does on purpose, the same way every run.
import { createRng } from '../../src/simulate/random.js';
import { statSync, type Stats } from 'node:fs';
import { identity } from '../../src/source/file-identity.js';
import { nodeFs, type FollowerFs, type FollowerHandle } from '../../src/source/follower-fs.js';

export type FsOp = 'stat' | 'lstat' | 'open' | 'readdir' | 'realpath' | 'glob' | 'read' | 'fstat' | 'close';

/** One call the follower is about to make: its kind, the path it is about (a handle's path as opened), its number. */
export interface FsCall {
  op: FsOp;
  path: string;
  n: number;
  /** A handle's file (dev:ino). */
  key?: string | undefined;
}

/** Runs before each call; what it returns is awaited before the call goes ahead (a stall). */
export type BeforeCall = (call: FsCall) => void | Promise<void>;

/**
 * A FollowerFs that calls `before` ahead of every call, its handles' calls included. It also keeps which
 * files (dev:ino) the follower holds open, so a test can tell a file deleted under the follower's open
 * descriptor (still readable) from one deleted before the follower ever opened it (its lines are lost).
 */
export class StarvedFs implements FollowerFs {
  calls = 0;
  /** dev:ino → descriptors the follower holds on it now. */
  readonly held = new Map<string, number>();
  before: BeforeCall;
  /** Real identity (dev:ino) → the one shown for it: a file system that gave a freed inode to a new file (see reuseInode). */
  private readonly shown = new Map<string, { dev: number; ino: number }>();

  constructor(
    before: BeforeCall = () => undefined,
    private readonly base: FollowerFs = nodeFs,
  ) {
    this.before = before;
  }

  private async step(op: FsOp, path: string, key?: string): Promise<void> {
    const r = this.before({ op, path, n: this.calls++, key });
    if (r !== undefined) await r;
  }

  /**
   * From now on the file at `path` is shown with the identity of `like` (a file deleted before): what
   * ext4 and most file systems do by luck when an inode is freed and the next file created gets it.
   */
  reuseInode(path: string, like: Stats): void {
    this.shown.set(identity(statSync(path)), { dev: like.dev, ino: like.ino });
  }

  private show(st: Stats): Stats {
    const as = this.shown.get(identity(st));
    if (as === undefined) return st;
    return Object.assign(Object.create(Object.getPrototypeOf(st) as object) as Stats, st, as);
  }

  /** Whether the follower holds a descriptor on the file with this identity. */
  holds(key: string): boolean {
    return (this.held.get(key) ?? 0) > 0;
  }

  async stat(path: string): Promise<Stats> {
    await this.step('stat', path);
    return this.show(await this.base.stat(path));
  }

  async lstat(path: string): Promise<Stats> {
    await this.step('lstat', path);
    return this.show(await this.base.lstat(path));
  }

  async readdir(path: string): Promise<string[]> {
    await this.step('readdir', path);
    return this.base.readdir(path);
  }

  async realpath(path: string): Promise<string> {
    await this.step('realpath', path);
    return this.base.realpath(path);
  }

  async glob(pattern: string, options: Parameters<FollowerFs['glob']>[1]): Promise<string[]> {
    await this.step('glob', pattern);
    return this.base.glob(pattern, options);
  }

  // A directory watch is not a step (it is set up once and its events come on their own), but the watch
  // and its filesystem check pass through, so a follower with sources.watch auto watches here too.
  statfs(path: string): ReturnType<NonNullable<FollowerFs['statfs']>> {
    return this.base.statfs?.(path) ?? Promise.reject(new Error('no statfs'));
  }

  watch(dir: string, onEvent: (type: string, name: string | null) => void, onError: (err: unknown) => void): { close(): void } {
    if (this.base.watch === undefined) throw new Error('no watch');
    return this.base.watch(dir, onEvent, onError);
  }

  async open(path: string): Promise<FollowerHandle> {
    await this.step('open', path);
    const fh = await this.base.open(path);
    // Bookkeeping of the harness, not a step of the follower: no hook here.
    const key = identity(await fh.stat());
    this.held.set(key, (this.held.get(key) ?? 0) + 1);
    let closed = false;
    return {
      read: async (buffer, offset, length, position) => {
        await this.step('read', path, key);
        return fh.read(buffer, offset, length, position);
      },
      stat: async () => {
        await this.step('fstat', path, key);
        return this.show(await fh.stat());
      },
      close: async () => {
        await this.step('close', path, key);
        if (!closed) {
          closed = true;
          this.held.set(key, (this.held.get(key) ?? 1) - 1);
        }
        return fh.close();
      },
    };
  }
}

/** A seeded generator (the simulator's mulberry32): the same seed, the same schedule of faults. */
export function seeded(seed: number): () => number {
  return createRng(seed);
}
