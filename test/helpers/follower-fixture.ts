// A FileFollower on a fresh temp directory per test, torn down after it: the set-up the follower tests share.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect } from 'vitest';
import { FileFollower, type FollowOptions } from '../../src/source/file-follower.js';
import type { LineSink, SourceEvents } from '../../src/source/line-sink.js';
import { SeqSink, SeqWriter, fdsInto, sleep, startChildWriter, type ChildWriter } from './sequence-log.js';

export interface FixtureOptions<S> {
  /** Start of the temp directory's name. */
  prefix: string;
  /** The file the tests write (or link), in the directory; default `app.log`. */
  name?: string;
  /** The pattern followed, from the directory; default the file's path. */
  pattern?: (dir: string) => string;
  /** Options every follow() starts from; default read from the start of files. */
  options?: Partial<FollowOptions>;
  /** Lines and events go here; default a SeqSink. */
  sink?: () => S;
  /** A SeqWriter opened on the file before each test (creating it); default true. */
  writer?: boolean;
  /** follow() before each test, after the writer is opened. */
  started?: boolean;
  /** Check after each test that nothing holds a descriptor into the directory any more. */
  checkFds?: boolean;
}

export interface FollowerFixture<S extends LineSink & SourceEvents> {
  readonly dir: string;
  /** The file the tests write (`name` in `dir`). */
  readonly path: string;
  readonly sink: S;
  /** The writer opened on `path` (with `writer`, the default). */
  readonly w: SeqWriter;
  /** The follower follow() last started. */
  readonly follower: FileFollower;
  /** Starts a follower of the pattern (polling only when asked); `opts` override. */
  follow(opts?: Partial<FollowOptions>, lines?: LineSink): Promise<FileFollower>;
  /** Another writer, on any file; closed after the test too. */
  writer(path: string): SeqWriter;
}

/**
 * Registers in the enclosing describe: before each test a fresh directory, sink and writer (and follower,
 * with `started`); after it the follower stopped, the writers closed, the descriptor check (`checkFds`),
 * the directory removed.
 */
export function followerFixture<S extends LineSink & SourceEvents = SeqSink>(o: FixtureOptions<S>): FollowerFixture<S> {
  const makeSink = o.sink ?? ((): S => new SeqSink() as unknown as S);
  const base = o.options ?? { startAt: 'start' };
  let dir = '';
  let sink: S | undefined;
  let w: SeqWriter | undefined;
  let follower: FileFollower | undefined;
  const writers: SeqWriter[] = [];
  const fx: FollowerFixture<S> = {
    get dir() {
      return dir;
    },
    get path() {
      return join(dir, o.name ?? 'app.log');
    },
    get sink() {
      return defined(sink, 'sink');
    },
    get w() {
      return defined(w, 'w (the fixture was made without a writer)');
    },
    get follower() {
      return defined(follower, 'follower (call follow() first)');
    },
    async follow(opts = {}, lines) {
      const patterns = [o.pattern?.(dir) ?? fx.path];
      follower = new FileFollower({ patterns, maxLineBytes: 4096, pollIntervalMs: 60_000, ...base, ...opts }, lines ?? fx.sink, fx.sink);
      await follower.start();
      return follower;
    },
    writer(path) {
      const writer = new SeqWriter(path);
      writers.push(writer);
      return writer;
    },
  };
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), o.prefix));
    sink = makeSink();
    w = o.writer === false ? undefined : fx.writer(fx.path);
    if (o.started) await fx.follow();
  });
  afterEach(async () => {
    await follower?.stop();
    follower = undefined;
    for (const writer of writers.splice(0)) writer.close();
    if (o.checkFds) expect(fdsInto(dir)).toEqual([]);
    await rm(dir, { recursive: true, force: true });
  });
  return fx;
}

/**
 * The free-running rotation tests: a child process appends 2 lines/ms to the fixture's file, followed by
 * its path or by a glob over its rotated names, while `rotate` runs every ~everyMs(k) ms for durationMs (it
 * returns whether it rotated). The writer is stopped before this returns.
 */
export async function rotateWhileWriting<S extends LineSink & SourceEvents>(
  fx: FollowerFixture<S>,
  kind: 'literal' | 'glob',
  everyMs: (rotations: number) => number,
  rotate: (writer: ChildWriter) => boolean,
  durationMs = 1200,
): Promise<{ follower: FileFollower; last: number; rotations: number }> {
  const writer = await startChildWriter(fx.path, { linesPerMs: 2 });
  const follower = await fx.follow({ patterns: [kind === 'literal' ? fx.path : join(fx.dir, 'app.log*')], pollIntervalMs: 5 });
  let rotations = 0;
  const until = Date.now() + durationMs;
  while (Date.now() < until) {
    await sleep(everyMs(rotations));
    if (rotate(writer)) rotations++;
  }
  const { last } = await writer.stop();
  return { follower, last, rotations };
}

function defined<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`followerFixture: no ${what}`);
  return value;
}
