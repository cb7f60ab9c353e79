// One run of the starvation harness: a follower polled on demand, a RotationWorld whose writer and rotator
// act at seeded points among the follower's file-system calls, then a quiet end, and the audit.
import { vi } from 'vitest';
import { FileFollower } from '../../src/source/file-follower.js';
import { IDLE_VISIBILITY_MS } from '../../src/source/stat-schedule.js';
import { RotationWorld, type RotationScheme } from './rotation-world.js';
import { SeqSink } from './sequence-log.js';
import { StarvedFs, seeded, type FsCall } from './starved-fs.js';

export interface StarveOptions {
  scheme: RotationScheme;
  seed: number;
  /** Polls with faults. */
  polls?: number;
  /** Chance that the world acts before any one call of the follower. */
  pAct?: number;
  /** Numbered schemes: generations kept (`rotate N`). */
  keep?: number;
  /** Each rename of a rotation is a step of its own (the follower sees half-shifted directories). */
  stepwise?: boolean;
  /** Acts of the world inside one poll, at most. */
  maxActsPerPoll?: number;
  /**
   * sources.watch auto, polled on its schedule (pollScheduled): files the directory's watch said nothing
   * of are not stat-ed, and the glob's listing is kept while the directory is quiet.
   */
  watch?: boolean;
  /**
   * Polled as the poll timer polls (pollScheduled, sources.watch off) every `intervalMs` of a clock the
   * run moves (Date faked, the timer itself never fires; the writer's files get its time as mtime): an idle
   * file is then not stat-ed every poll (stat-schedule.ts), as in serve. Some polls come late (2–4 intervals).
   */
  timer?: { intervalMs: number };
  /** Called with each step, for finding out what a failing seed does. */
  trace?: (line: string) => void;
}

export interface StarveResult {
  sink: SeqSink;
  world: RotationWorld;
  missing: number[];
  duplicated: number[];
  /** Missing lines that were not in a file that vanished before the follower held it. */
  unexcused: number[];
  unrecovered: number;
}

export async function starve(dir: string, o: StarveOptions): Promise<StarveResult> {
  const rng = seeded(o.seed);
  const timer = o.timer;
  const advance = (ms: number): void => {
    if (timer !== undefined) vi.setSystemTime(Date.now() + ms);
  };
  const fs = new StarvedFs();
  // A file counts as held when the follower follows it through an open descriptor, not when it only has it
  // open for a moment to read its fingerprint (a walk of the family): such a file, compressed or deleted
  // before it was followed, was never read, and its lines are excusable.
  let follower: FileFollower | undefined;
  const world = new RotationWorld(dir, o.scheme, (key) => fs.holds(key) && follower?.holdsOpen(key) === true, o.keep, o.stepwise ?? false);
  world.stampWrites = timer !== undefined;
  const sink = new SeqSink();
  const pAct = o.pAct ?? 0.15;
  const trace = o.trace;
  const act = (): void => {
    advance(1);
    const r = rng();
    if (r < 0.45) {
      const n = 1 + Math.floor(rng() * 20);
      trace?.(`  write ${world.next}..${world.next + n - 1}`);
      world.write(n);
    } else if (world.inFlight && r < 0.85) {
      world.step();
      trace?.(`  rotation step, at path #${world.keyAtPath()}`);
    } else if (r < 0.7) {
      const before = world.next;
      const can = world.canRotate;
      world.rotate();
      trace?.(`  rotate (${can ? 'done' : 'not yet'}${world.next > before ? `, wrote ${before}..${world.next - 1}` : ''}) now at path #${world.keyAtPath()}`);
    } else {
      world.reopen();
      trace?.(`  reopen, at path #${world.keyAtPath()}`);
    }
  };
  // Acts per poll are bounded, so a poll always ends (the world cannot outrun the follower forever).
  const maxActs = o.maxActsPerPoll ?? 40;
  let acts = 0;
  let faults = false;
  fs.before = (call: FsCall) => {
    trace?.(`${call.op} ${call.path.slice(dir.length + 1)}${call.key === undefined ? '' : ` #${call.key.split(':')[1]}`}`);
    if (faults && acts < maxActs && rng() < pAct) {
      acts++;
      act();
    }
  };
  world.write(5);
  follower = new FileFollower(
    { patterns: [world.path], maxLineBytes: 4096, pollIntervalMs: timer?.intervalMs ?? 3_600_000, startAt: 'start', fs, watch: o.watch === true ? 'auto' : 'off' },
    sink,
    sink,
  );
  const f = follower;
  const poll = (): Promise<void> => (o.watch === true || timer !== undefined ? f.pollScheduled() : f.pollOnce());
  try {
    if (timer !== undefined) vi.useFakeTimers({ toFake: ['Date', 'setInterval', 'clearInterval'], now: Date.now() });
    await follower.start();
    faults = true;
    for (let p = 0; p < (o.polls ?? 40); p++) {
      const between = Math.floor(rng() * 4);
      for (let i = 0; i < between; i++) act();
      acts = 0;
      if (timer !== undefined) advance(timer.intervalMs * (rng() < 0.2 ? 2 + Math.floor(rng() * 3) : 1));
      trace?.(`--- poll ${p}`);
      await poll();
    }
    faults = false;
    world.settle();
    world.write(2);
    // On the timer's clock, until an idle file's deferred stat is due whatever its back-off.
    const quiet = timer === undefined ? 4 : 4 + Math.ceil(IDLE_VISIBILITY_MS / timer.intervalMs);
    for (let i = 0; i < quiet; i++) {
      if (timer !== undefined) advance(timer.intervalMs);
      // Watch events come through the event loop: a moment for them, as a timer's poll would have.
      if (o.watch === true) await new Promise((r) => setTimeout(r, 20));
      await poll();
    }
  } finally {
    await follower.stop();
    world.close();
    if (timer !== undefined) vi.useRealTimers();
  }
  const { missing, duplicated } = sink.audit(world.last);
  const excusable = world.excusable();
  return {
    sink,
    world,
    missing,
    duplicated,
    unexcused: missing.filter((n) => !excusable.has(n)),
    unrecovered: sink.rotations.filter((r) => r.kind === 'unrecovered').length,
  };
}
