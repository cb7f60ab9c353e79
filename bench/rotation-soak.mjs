#!/usr/bin/env node
// Rotation soak: the file follower (dist/, run `npm run build` first) against every rotation kind at a
// rate of several rotations per poll, with the machine starved on purpose: busy processes beside it,
// event-loop stalls injected between its steps, and slow stat/read injected through its fs seam
// (FollowOptions.fs). A child process appends sequence-numbered lines (2 per ms) and reopens its file on
// SIGHUP, as a daemon does for logrotate's postrotate. Bounded in time; prints, per kind, lines written
// against lines counted (missing, read twice), the rotations the follower reported as unrecovered and
// the lines it estimated lost in them (files deleted or compressed before it held them).
//
//   node bench/rotation-soak.mjs [--seconds 4] [--every 25] [--poll 100] [--hogs 4] [--stall-ms 20] [--slow-ms 3] [--kinds rename,numbered,...]
//
// --hogs N: N busy-loop processes for the run (0 for none); --stall-ms: an injected stall (the event loop
// held busy) of up to this long before 1 in 50 fs calls; --slow-ms: each stat/read delayed up to this long.
// Lines a kind may lose by design (delete: a file created and deleted between two polls; compress: a
// generation compressed before any poll read it) are shown, not failed; the exit code is 1 only when a
// kind that loses nothing by design (rename, numbered, create) missed or repeated a line.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { lstat, open, readdir, realpath, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import fg from 'fast-glob';
import { FileFollower } from '../dist/source/file-follower.js';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? dflt : args[i + 1];
};
const SECONDS = Number(opt('seconds', 4));
const EVERY_MS = Number(opt('every', 25));
const POLL_MS = Number(opt('poll', 100));
const HOGS = Number(opt('hogs', 4));
const STALL_MS = Number(opt('stall-ms', 20));
const SLOW_MS = Number(opt('slow-ms', 3));
const KINDS = opt('kinds', 'rename,numbered,create,copytruncate,compress,delete').split(',');
const EXACT = new Set(['rename', 'numbered', 'create']);

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The follower's fs calls, slowed (a delay before each stat and read) and stalled (the loop held busy now and then). */
function starvedFs() {
  const slow = async () => {
    if (Math.random() < 0.02 && STALL_MS > 0) {
      const until = Date.now() + Math.random() * STALL_MS;
      while (Date.now() < until);
    }
    if (SLOW_MS > 0) await sleep(Math.random() * SLOW_MS);
  };
  return {
    stat: async (p) => (await slow(), stat(p)),
    lstat: async (p) => (await slow(), lstat(p)),
    readdir: async (p) => (await slow(), readdir(p)),
    realpath: (p) => realpath(p),
    glob: (p, o) => fg(p, o),
    open: async (p) => {
      await slow();
      const fh = await open(p, 'r');
      return {
        read: async (b, o, l, pos) => (await slow(), fh.read(b, o, l, pos)),
        stat: async () => (await slow(), fh.stat()),
        close: () => fh.close(),
      };
    },
  };
}

const CHILD = `
const fs = require('node:fs');
const [path, mode] = [process.argv[1], process.argv[2]];
let fd = fs.openSync(path, 'a');
let next = 1;
const write = (k) => { let s = ''; for (let i = 0; i < k; i++) s += '{"seq":' + (next++) + '}\\n'; fs.writeSync(fd, s); };
const reopen = () => { const old = fd; fd = fs.openSync(path, 'a'); fs.closeSync(old); };
const tick = setInterval(() => write(2), 1);
process.on('SIGHUP', () => {
  if (mode === 'self-delete') { fs.unlinkSync(path); write(3); }
  reopen();
});
process.on('SIGTERM', () => { clearInterval(tick); fs.closeSync(fd); process.stdout.write(String(next - 1) + '\\n', () => process.exit(0)); });
process.stdout.write('ready\\n');
`;

function startWriter(path, mode) {
  const child = spawn(process.execPath, ['-e', CHILD, path, mode], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const ready = new Promise((resolve) => child.stdout.once('data', resolve));
  return {
    ready,
    hup: () => child.kill('SIGHUP'),
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve(Number(out.trim().split('\n').pop())));
        child.kill('SIGTERM');
      }),
  };
}

function shift(path, { gz = false } = {}) {
  let k = 1;
  while (existsSync(`${path}.${k}`) || existsSync(`${path}.${k}.gz`)) k++;
  for (; k > 1; k--) {
    for (const ext of gz ? ['', '.gz'] : ['']) if (existsSync(`${path}.${k - 1}${ext}`)) renameSync(`${path}.${k - 1}${ext}`, `${path}.${k}${ext}`);
  }
}

let stamp = 0;
/** One rotation of `kind`; false when it has to wait (the writer has not reopened since the last one). */
function rotateOnce(kind, path, writer) {
  if (kind !== 'copytruncate' && kind !== 'delete' && kind !== 'create' && !existsSync(path)) return false;
  switch (kind) {
    case 'rename':
      renameSync(path, `${path}-${20260101000000 + ++stamp}`);
      break;
    case 'numbered':
      shift(path);
      renameSync(path, `${path}.1`);
      break;
    case 'create':
      if (!existsSync(path)) return false;
      shift(path);
      renameSync(path, `${path}.1`);
      writeFileSync(path, '');
      break;
    case 'copytruncate':
      shift(path);
      copyFileSync(path, `${path}.1`);
      truncateSync(path, 0);
      return true;
    case 'compress':
      shift(path, { gz: true });
      renameSync(path, `${path}.1`);
      if (existsSync(`${path}.2`)) {
        writeFileSync(`${path}.2.gz`, gzipSync(readFileSync(`${path}.2`)));
        unlinkSync(`${path}.2`);
      }
      break;
    case 'delete':
      break; // the writer deletes its own file on SIGHUP
  }
  writer.hup();
  return true;
}

async function soak(kind) {
  const dir = mkdtempSync(join(tmpdir(), `zpe-soak-${kind}-`));
  const path = join(dir, 'app.log');
  const counts = new Map();
  let unrecovered = 0;
  const sink = {
    line(text) {
      const m = /^\{"seq":(\d+)\}$/.exec(text);
      if (m) counts.set(Number(m[1]), (counts.get(Number(m[1])) ?? 0) + 1);
    },
    oversize() {},
  };
  let estimated = 0;
  const events = {
    error() {},
    rotated: (_s, _p, k) => void (k === 'unrecovered' && unrecovered++),
    unrecoveredLines: (_s, _p, lines) => void (estimated += lines),
  };
  try {
    const writer = startWriter(path, kind === 'delete' ? 'self-delete' : 'hup');
    await writer.ready;
    const follower = new FileFollower({ patterns: [path], maxLineBytes: 4096, pollIntervalMs: POLL_MS, startAt: 'start', fs: starvedFs() }, sink, events);
    await follower.start();
    let rotations = 0;
    const until = Date.now() + SECONDS * 1000;
    while (Date.now() < until) {
      await sleep(EVERY_MS);
      if (rotateOnce(kind, path, writer)) rotations++;
    }
    const last = await writer.stop();
    const settle = Date.now() + 5000;
    while (counts.size < last && Date.now() < settle) await sleep(50);
    await sleep(300);
    await follower.pollOnce();
    await follower.pollOnce();
    await follower.stop();
    let missing = 0;
    let twice = 0;
    for (let n = 1; n <= last; n++) {
      const c = counts.get(n) ?? 0;
      if (c === 0) missing++;
      if (c > 1) twice++;
    }
    return { kind, rotations, written: last, counted: counts.size, missing, twice, unrecovered, estimated };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const hogs = [];
for (let i = 0; i < HOGS; i++) hogs.push(spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }));
const stopHogs = () => hogs.forEach((h) => h.kill('SIGKILL'));
process.on('exit', stopHogs);
let failed = false;
try {
  console.log(
    `rotation soak: ${SECONDS} s per kind, a rotation every ~${EVERY_MS} ms, polls every ${POLL_MS} ms, ${HOGS} busy processes, stalls up to ${STALL_MS} ms, stat/read delayed up to ${SLOW_MS} ms`,
  );
  console.log('kind          rotations   written   counted   missing   twice   unrecovered   est. lost');
  for (const kind of KINDS) {
    const r = await soak(kind);
    if (EXACT.has(kind) && (r.missing > 0 || r.twice > 0)) failed = true;
    console.log(
      `${kind.padEnd(12)}  ${String(r.rotations).padStart(9)}  ${String(r.written).padStart(8)}  ${String(r.counted).padStart(8)}  ${String(r.missing).padStart(8)}  ${String(r.twice).padStart(6)}  ${String(r.unrecovered).padStart(12)}  ${String(r.estimated).padStart(10)}`,
    );
  }
} finally {
  stopHogs();
}
process.exit(failed ? 1 : 0);
