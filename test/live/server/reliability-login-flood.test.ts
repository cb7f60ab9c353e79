// Issue 24, "login floods": wrong passwords from 60 source addresses, each inside its own failed-login
// limit, kept the bcrypt queue full, and every login not already remembered got 429 (17 of 17 right
// passwords), so a Prometheus whose login was lost with an exporter restart could not scrape while the
// flood lasted. The flood again on loopback (127.0.0.0/8 is all local: each flooder binds its own
// 127.0.0.x), run by a child process so its work does not slow the measured client, against a real serve
// with a cost-10 hash: right passwords, for names not remembered yet, from other networks, get 200 within
// 2 s each while it runs.
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sample, startServe, type ServeProcess } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const dir = tempDir('zp-login-flood-');
const USERS = ['prometheus-a', 'prometheus-b', 'prometheus-c'];
const HASH = bcrypt.hashSync('y', 10);
const basic = (credentials: string) => `Basic ${Buffer.from(credentials).toString('base64')}`;

/** 60 addresses, 127.0.0.10 to .69, each with 3 wrong-password logins in flight at all times, until killed. */
const FLOOD = `
const http = require('node:http');
const [port, user] = process.argv.slice(1);
const counts = {};
const auth = (i) => 'Basic ' + Buffer.from(user + ':wrong-' + i).toString('base64');
let n = 0;
const loop = (address) => {
  const req = http.get({ host: '127.0.0.1', port, path: '/metrics', localAddress: address, agent: false, headers: { authorization: auth(n++) } }, (res) => {
    counts[res.statusCode] = (counts[res.statusCode] || 0) + 1;
    res.resume();
    res.on('end', () => loop(address));
  });
  req.on('error', () => setTimeout(() => loop(address), 50));
};
for (let a = 10; a < 70; a++) for (let k = 0; k < 3; k++) loop('127.0.0.' + a);
setInterval(() => process.stdout.write(JSON.stringify(counts) + '\\n'), 500);
`;

function login(port: number, user: string, localAddress: string): Promise<{ status: number; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/metrics', localAddress, agent: false, headers: { authorization: basic(`${user}:right-${user}`) } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0 }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('a 60-address wrong-password flood does not lock out a login that is not remembered', () => {
  let serve: ServeProcess;
  let flood: ChildProcess | undefined;
  let floodCounts: Record<string, number> = {};
  beforeAll(async () => {
    // Cost 10 (htpasswd's default): ~75 ms of CPU per check on an idle core, several times that here.
    writeFileSync(join(dir, 'web.yml'), `basic_auth_users:\n${USERS.map((u) => `  ${u}: ${bcrypt.hashSync(`right-${u}`, 10)}\n`).join('')}`);
    serve = await startServe([`--web.config.file=${join(dir, 'web.yml')}`], 20_000);
  });
  afterAll(async () => {
    flood?.kill('SIGKILL');
    // With a backlog of checks queued, serve still exits at once on SIGTERM (it did not: queued checks restarted the thread).
    expect(await serve.stop()).toBe(0);
  }, 30_000);

  it('right passwords from other networks get 200 within 2 s each while the flood keeps the queue full', async () => {
    const port = Number(new URL(serve.url).port);
    flood = spawn(process.execPath, ['-e', FLOOD, String(port), USERS[0] as string], { stdio: ['ignore', 'pipe', 'inherit'] });
    flood.stdout?.on('data', (chunk: Buffer) => {
      const last = chunk.toString().trim().split('\n').at(-1);
      if (last !== undefined && last !== '') floodCounts = JSON.parse(last) as Record<string, number>;
    });
    // The flood is under way: its network has failed (its logins are in the failing lane) and the queue is
    // full of its logins (hundreds refused). Not "5 checks failed": the failing lane's thread runs at nice
    // 10, and beside two busy processes on two cores one check there takes seconds, so how many finish in
    // a given time measures the machine, not the exporter (4 in 15 s were seen, and 1 at load 19).
    const deadline = Date.now() + 60_000;
    while ((floodCounts['401'] ?? 0) < 1 || (floodCounts['429'] ?? 0) < 100) {
      if (Date.now() > deadline) throw new Error(`the flood never filled the queue: ${JSON.stringify(floodCounts)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    // Each login is timed next to a request that needs no bcrypt (unauthenticated /-/healthy, 401): what the
    // loaded machine itself takes to answer anything at that moment, which no order of the queue can give back.
    const probe = () =>
      new Promise<number>((resolve) => {
        const t0 = performance.now();
        request({ host: '127.0.0.1', port, path: '/-/healthy', localAddress: '127.0.9.1', agent: false }, (res) => {
          res.resume();
          res.on('end', () => resolve(performance.now() - t0));
        }).end();
      });
    // Each user once, so none is remembered; from three networks other than the flood's 127.0.0.0/24.
    const results: { status: number; ms: number; probeMs: number; checkMs: number }[] = [];
    for (const [i, user] of USERS.entries()) {
      const [probeMs, r] = await Promise.all([probe(), login(port, user, `127.0.${i + 1}.1`)]);
      // One cost-10 check on this machine now: the login's own, which it cannot skip.
      const t0 = performance.now();
      bcrypt.compareSync('x', HASH);
      results.push({ ...r, probeMs, checkMs: performance.now() - t0 });
      await new Promise((r) => setTimeout(r, 300));
    }
    const during = { ...floodCounts };
    // The figures, for the record (bench/RESULTS.md quotes runs of this test).
    console.log('login flood', JSON.stringify({ results, during }));
    flood.kill('SIGKILL');
    // Before: 429 for every one of them (the queue of 32 was the flood's).
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    // Within 2 s of what the machine itself takes at that moment: the login's own bcrypt (checkMs, one
    // cost-10 check here) and an answer that needs none (probeMs). The login waits for no wrong password's
    // check (the failing lane pauses while a clean login is checked), and the flood's 429s are held a
    // second each, so its 180 sockets ask a few hundred times a second instead of thousands. On an idle
    // machine that is the issue's 2 s; beside two busy processes at load 17-19 a cost-10 check alone takes
    // 0.8-1 s and a trivial answer up to 1 s, which no order of the queue can give back. Waiting behind the
    // flood's checks (up to 16 of them from its network, seconds each at nice 10) would exceed it.
    for (const r of results) expect(r.ms, JSON.stringify({ results, during })).toBeLessThan(2_000 + r.checkMs + r.probeMs);
    // The flood was refused all along, and never got in.
    expect(during['200'] ?? 0).toBe(0);
    expect(during['401']).toBeGreaterThan(0);
    expect(during['429']).toBeGreaterThan(0);

    // A refused login is answered after web.basicAuth.refusalDelay (1 s), not at once. An address of its
    // own (no flood address: their buckets refill one login per 6 s, and on a loaded machine the logins
    // above may take that long) sends 16 wrong logins at once: failedLoginBurst (10) take its bucket's
    // tokens and wait for their checks, the rest are refused without one, each after the hold. Sent at
    // once, not one after another until the first 429: the checks before it run on the failing lane's
    // thread (nice 10), and ten of them in a row beside two busy processes took longer than the test.
    // The checked ones are not waited for; serve's stop closes them.
    const refused: { status: number; ms: number }[] = [];
    for (let i = 0; i < 16; i++) {
      const t0 = performance.now();
      const req = request({ host: '127.0.0.1', port, path: '/metrics', localAddress: '127.0.200.1', agent: false, headers: { authorization: basic(`${USERS[0]}:wrong`) } }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode === 429) refused.push({ status: 429, ms: performance.now() - t0 });
        });
      });
      req.on('error', () => undefined);
      req.end();
    }
    // 6 (16 − 10); 5 when a token came back while the 16 were read.
    const refusedBy = Date.now() + 60_000;
    while (refused.length < 5 && Date.now() < refusedBy) await new Promise((r) => setTimeout(r, 50));
    expect(refused.length, JSON.stringify(refused)).toBeGreaterThanOrEqual(5);
    for (const r of refused) expect(r.ms, JSON.stringify(refused)).toBeGreaterThanOrEqual(990);

    const text = await new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: '/metrics', headers: { authorization: basic(`${USERS[1]}:right-${USERS[1]}`) } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve(body));
      });
      req.on('error', reject);
      req.end();
    });
    expect(sample(text, 'zero_plane_exporter_basic_auth_checks_total{result="verified"}')).toBe(3);
  }, 150_000);
});
