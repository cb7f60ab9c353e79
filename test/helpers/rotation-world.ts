// A log directory driven step by step: a writer appending sequence lines through its descriptor, and a
// rotator applying one rotation scheme, both called synchronously from the starved fs's hooks (or between
// polls), so where a rotation falls among the follower's calls is chosen, not left to the scheduler. The
// world knows which file holds every line, and which files vanished (deleted, compressed) while the
// follower held no descriptor on them: the only lines the follower may miss.
import { closeSync, copyFileSync, existsSync, ftruncateSync, futimesSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { identity } from '../../src/source/file-identity.js';
import { seqBlock } from './sequence-log.js';

/**
 * - `rename`: NAME → NAME-STAMP (dated names), the writer creates NAME when it reopens.
 * - `numbered`: NAME.k → NAME.k+1, NAME → NAME.1 (logrotate's shift, any depth); with `keep`, NAME.(keep+1) is deleted.
 * - `create`: `numbered`, and the rotator creates the new NAME at once (logrotate `create`); the writer opens it when it reopens.
 * - `copytruncate`: the shift, NAME copied to NAME.1, NAME truncated under the writer's descriptor.
 * - `compress`: `numbered`, and NAME.1 gzipped to NAME.1.gz once the writer has reopened (logrotate `compress`, no delaycompress).
 * - `delete`: the writer deletes its own file, writes a few lines more to it, and creates NAME again.
 */
export type RotationScheme = 'rename' | 'numbered' | 'create' | 'copytruncate' | 'compress' | 'delete';

export const SCHEMES: readonly RotationScheme[] = ['rename', 'numbered', 'create', 'copytruncate', 'compress', 'delete'];

interface LogFile {
  key: string;
  /** Sequence numbers this file holds now (a copytruncate moves them to the copy). */
  seqs: number[];
  /** Deleted or compressed away; `held`: the follower had it open then (it can still drain it). */
  vanished?: { held: boolean };
}

export class RotationWorld {
  readonly path: string;
  private fd: number;
  private file: LogFile;
  /** The file each name in the directory holds, as the rotator left it. */
  private readonly names = new Map<string, LogFile>();
  private readonly all: LogFile[] = [];
  next = 1;
  rotations = 0;
  /** Each write sets its file's mtime to Date.now() (a run on a faked clock: the follower compares mtimes with it). */
  stampWrites = false;
  private stamp = 0;
  /** A rotation moved the writer's file and it has not reopened yet. */
  private pendingReopen = false;
  /** The steps left of the rotation in flight. */
  private readonly steps: Array<() => void> = [];
  /** Lines lost in copytruncate's window between copy and truncation (no follower can read them). */
  private readonly window = new Set<number>();

  constructor(
    readonly dir: string,
    readonly scheme: RotationScheme,
    private readonly holds: (key: string) => boolean,
    private readonly keep = Number.POSITIVE_INFINITY,
    /** Rotations run one rename at a time (step()), not all at once. */
    private readonly stepwise = false,
    /** Rotations in a run, at most: the family, walked at every rotation found, stays small enough. */
    private readonly maxRotations = 80,
  ) {
    this.path = join(dir, 'app.log');
    this.fd = openSync(this.path, 'a');
    this.file = this.track(this.path);
  }

  /** The inode at the path now (for traces). */
  keyAtPath(): string {
    return existsSync(this.path) ? String(statSync(this.path).ino) : '-';
  }

  get last(): number {
    return this.next - 1;
  }

  private track(path: string, seqs: number[] = []): LogFile {
    const f: LogFile = { key: identity(statSync(path)), seqs };
    this.names.set(path, f);
    this.all.push(f);
    return f;
  }

  write(count: number): void {
    if (count <= 0) return;
    writeSync(this.fd, seqBlock(this.next, this.next + count - 1));
    if (this.stampWrites) futimesSync(this.fd, new Date(), new Date());
    for (let i = 0; i < count; i++) this.file.seqs.push(this.next++);
  }

  /** Whether a rotation can start now: none in flight, and the rename schemes wait for the writer to have reopened (as the free-running test does). */
  get canRotate(): boolean {
    if (this.steps.length > 0 || this.rotations >= this.maxRotations) return false;
    if (this.scheme === 'create') return existsSync(this.path);
    if (this.scheme === 'copytruncate') return true;
    return !this.pendingReopen;
  }

  /** A rotation is under way: some of its renames (or its copy, truncate, compress) are still to run. */
  get inFlight(): boolean {
    return this.steps.length > 0;
  }

  /**
   * Starts a rotation. Stepwise, each rename (copy, truncate, unlink) of it is one step, run by step(), so
   * the follower can see the directory half-way through a shift, as it can see logrotate's; otherwise the
   * whole rotation runs now.
   */
  rotate(): void {
    if (!this.canRotate) return;
    this.rotations++;
    const p = this.path;
    const steps = this.steps;
    switch (this.scheme) {
      case 'rename':
        steps.push(() => {
          this.move(p, `${p}-${String(20260101000000 + ++this.stamp)}`);
          this.pendingReopen = true;
        });
        break;
      case 'numbered':
      case 'compress':
      case 'create':
        this.shift();
        steps.push(() => {
          this.move(p, `${p}.1`);
          this.pendingReopen = true;
          if (this.scheme === 'create') {
            closeSync(openSync(p, 'a'));
            this.track(p);
          }
        });
        break;
      case 'copytruncate': {
        this.shift();
        let copied: number[] = [];
        steps.push(() => {
          copyFileSync(p, `${p}.1`);
          copied = [...(this.names.get(p) as LogFile).seqs];
          this.track(`${p}.1`, copied);
        });
        steps.push(() => {
          // logrotate's own window: lines written between the copy and the truncation are in neither file.
          const at = this.names.get(p) as LogFile;
          for (const n of at.seqs.slice(copied.length)) this.window.add(n);
          at.seqs = [];
          ftruncateSync(this.fd, 0);
        });
        break;
      }
      case 'delete':
        steps.push(() => {
          unlinkSync(p);
          this.vanish(p);
        });
        steps.push(() => this.write(3));
        steps.push(() => {
          this.pendingReopen = true;
          this.reopen();
        });
        break;
    }
    if (!this.stepwise) this.finishRotation();
  }

  /** Runs the next step of the rotation in flight; false when there is none. */
  step(): boolean {
    const next = this.steps.shift();
    next?.();
    return next !== undefined;
  }

  finishRotation(): void {
    while (this.step());
  }

  /** The writer reopens its path (SIGHUP), creating it unless `create` made it already; with `compress`, NAME.1 is compressed after. */
  reopen(): void {
    if (!this.pendingReopen) return;
    this.pendingReopen = false;
    closeSync(this.fd);
    const made = !existsSync(this.path);
    this.fd = openSync(this.path, 'a');
    const at = this.names.get(this.path);
    this.file = made || at === undefined ? this.track(this.path) : at;
    if (this.scheme === 'compress') {
      const one = `${this.path}.1`;
      this.steps.push(() => {
        if (existsSync(one)) this.compress(one);
      });
      if (!this.stepwise) this.finishRotation();
    }
  }

  /** Queues the shift of NAME.k (and NAME.k.gz) to k+1, oldest first; past `keep`, the oldest is deleted. */
  private shift(): void {
    let k = 1;
    while (existsSync(`${this.path}.${k}`) || existsSync(`${this.path}.${k}.gz`)) k++;
    for (; k > 1; k--) {
      for (const ext of ['', '.gz']) {
        const from = `${this.path}.${k - 1}${ext}`;
        if (!existsSync(from)) continue;
        const to = `${this.path}.${k}${ext}`;
        if (k > this.keep) {
          this.steps.push(() => {
            unlinkSync(from);
            this.vanish(from);
          });
        } else this.steps.push(() => this.move(from, to));
      }
    }
  }

  private move(from: string, to: string): void {
    renameSync(from, to);
    const f = this.names.get(from);
    this.names.delete(from);
    if (f !== undefined) this.names.set(to, f);
  }

  private compress(path: string): void {
    writeFileSync(`${path}.gz`, gzipSync(readFileSync(path)));
    unlinkSync(path);
    this.vanish(path);
    this.names.delete(`${path}.gz`);
  }

  private vanish(path: string): void {
    const f = this.names.get(path);
    this.names.delete(path);
    if (f !== undefined) f.vanished = { held: this.holds(f.key) };
  }

  /** The lines the follower may have missed: those of files that vanished before it held them open. */
  excusable(): Set<number> {
    const out = new Set<number>(this.window);
    for (const f of this.all) if (f.vanished !== undefined && !f.vanished.held) for (const n of f.seqs) out.add(n);
    return out;
  }

  /** Ends the rotations: the writer reopens if a rotation is pending, so the last file is at the path. */
  settle(): void {
    this.finishRotation();
    this.reopen();
    this.finishRotation();
  }

  close(): void {
    closeSync(this.fd);
  }
}
