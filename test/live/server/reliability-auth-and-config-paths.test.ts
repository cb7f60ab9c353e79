// Issue 17's auth and config-path rows, each reproduced as the attack was and named by the fault:
// a wrong-password flood must not starve scrapes with cached credentials, a login's cost must not tell
// which user names exist, unreasonable bcrypt costs and TLS versions Node cannot honour are refused at
// start, and special files in any config path are refused with a clear error instead of being read.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import bcrypt from 'bcryptjs';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { basicAuth, equalCost } from '../../../src/server/basic-auth.js';
import { bcryptCost } from '../../../src/server/bcrypt-cost.js';
import { BcryptWorker, type Verifier } from '../../../src/server/bcrypt-verifier.js';
import { boundAddress, listen } from '../../../src/server/http-server.js';
import { createLogger } from '../../../src/server/logger.js';
import { parseWebConfig } from '../../../src/server/web-config.js';
import { makeCertificates } from '../../helpers/certificates.js';
import { runCli, sample, startServe, type ServeProcess } from '../../helpers/cli-process.js';
import { tempDir } from '../../helpers/temp-dir.js';

const dir = tempDir('zp-auth-paths-');
const path = (name: string) => join(dir, name);
const basic = (credentials: string) => ({ authorization: `Basic ${Buffer.from(credentials).toString('base64')}` });

describe('wrong-password flood: 150 wrong passwords do not delay a scrape with cached credentials', () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    // Cost 10, the htpasswd default the attack used: ~75 ms of CPU per check.
    writeFileSync(path('web.yml'), `basic_auth_users:\n  prometheus: ${bcrypt.hashSync('scrape-secret', 10)}\n`);
    // One more failed login per hour after the burst, not per 6 s: a slow, loaded machine must not see a
    // token come back in the middle of the test and turn a 429 into a 401. The counts are what is tested.
    // A burst of 4, not the default 10: all but the first of the flood's checks run on the failing lane's
    // thread (nice 10), and beside two busy processes one check there takes seconds; ten of them took
    // longer than the test. The promise is the same: the flood costs failedLoginBurst checks, no more.
    writeFileSync(path('zp.yml'), 'web:\n  basicAuth:\n    failedLoginInterval: 1h\n    failedLoginBurst: 4\n');
    serve = await startServe([`--config.file=${path('zp.yml')}`, `--web.config.file=${path('web.yml')}`]);
  });
  afterAll(async () => {
    expect(await serve.stop()).toBe(0);
  });

  it('the cached scrape answers at once while the flood runs; the flood costs at most failedLoginBurst (4) bcrypt checks', async () => {
    const metrics = `${serve.url}/metrics`;
    expect((await fetch(metrics, { headers: basic('prometheus:scrape-secret') })).status).toBe(200);

    const flood = Array.from({ length: 150 }, (_, i) => fetch(metrics, { headers: basic(`prometheus:wrong-${i}`) }).then((r) => r.status));
    const scrapeMs: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const r = await fetch(metrics, { headers: basic('prometheus:scrape-secret') });
      scrapeMs.push(performance.now() - t0);
      expect(r.status).toBe(200);
    }
    const statuses = await Promise.all(flood);
    // Before: 13–14 s, past Prometheus' 10 s scrape timeout. The bound is loose for a loaded two-core CI
    // machine; the exact promise is the count below: the flood never reaches more than 10 bcrypt checks.
    expect(Math.max(...scrapeMs)).toBeLessThan(2_000);
    expect(statuses.filter((s) => s === 401)).toHaveLength(4);
    expect(statuses.filter((s) => s === 429)).toHaveLength(146);

    const text = await (await fetch(metrics, { headers: basic('prometheus:scrape-secret') })).text();
    expect(sample(text, 'zero_plane_exporter_basic_auth_checks_total{result="verified"}')).toBe(1);
    expect(sample(text, 'zero_plane_exporter_basic_auth_checks_total{result="failed"}')).toBe(4);
    expect(sample(text, 'zero_plane_exporter_basic_auth_checks_total{result="throttled"}')).toBe(146);
    // The flood's checks finish when the failing lane's thread gets the CPU: bounded, not instant, on a busy machine.
  }, 120_000);

  it('a 429 for too many failed logins carries Retry-After, and a scrape with the right password is still served', async () => {
    const r = await fetch(`${serve.url}/metrics`, { headers: basic('prometheus:still-wrong') });
    expect(r.status).toBe(429);
    expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await fetch(`${serve.url}/-/healthy`, { headers: basic('prometheus:scrape-secret') })).status).toBe(200);
  });
});

describe('user-name timing: every login costs a bcrypt of the same cost, whatever the user name', () => {
  it('an unknown user and users with cheaper hashes pay up to the highest cost (2^cost units of work each)', async () => {
    const cheap = bcrypt.hashSync('a', 4);
    const dear = bcrypt.hashSync('b', 6);
    const users = new Map([
      ['alice', cheap],
      ['bob', dear],
    ]);
    const plan = equalCost(users);
    expect(plan.maxCost).toBe(6);
    expect(plan.decoy).toBe(dear);
    expect((plan.padSalts.get(cheap) ?? []).map(bcryptCost)).toEqual([4, 5]);
    expect(plan.padSalts.get(dear)).toEqual([]);

    // The work each login asks of the bcrypt thread, as the middleware asks it.
    const worker = new BcryptWorker();
    const work: Record<string, number> = {};
    let current = '';
    const verifier: Verifier = {
      verify: (password, hash, pads) => {
        work[current] = [hash, ...pads].reduce((sum, h) => sum + 2 ** bcryptCost(h), 0);
        return worker.verify(password, hash, pads);
      },
      close: () => worker.close(),
    };
    const auth = basicAuth({ users, log: createLogger('error', () => undefined), verifier });
    const app = express();
    app.use(auth.handler);
    app.get('/', (_req, res) => res.send('ok'));
    const server = await listen(app, '127.0.0.1', 0);
    try {
      for (const user of ['alice', 'bob', 'mallory']) {
        current = user;
        const r = await fetch(`http://${boundAddress(server)}/`, { headers: basic(`${user}:wrong`) });
        expect(r.status).toBe(401);
      }
      expect(work).toEqual({ alice: 64, bob: 64, mallory: 64 });
      current = 'alice';
      expect((await fetch(`http://${boundAddress(server)}/`, { headers: basic('alice:a') })).status).toBe(200);
      expect(work.alice).toBe(64);
    } finally {
      server.close();
      server.closeAllConnections();
      await auth.close();
    }
  });
});

describe('unreasonable bcrypt cost: a cost-31 hash (or any above web.basicAuth.maxBcryptCost) is refused at start', () => {
  const hashOfCost = (cost: number) => `$2y$${String(cost).padStart(2, '0')}$${'a'.repeat(53)}`;

  it('exits 2 naming the user and the cost, without computing anything', () => {
    writeFileSync(path('cost31.yml'), `basic_auth_users:\n  alice: ${bcrypt.hashSync('x', 4)}\n  eve: ${hashOfCost(31)}\n`);
    const r = runCli(['serve', '--web.listen-address=127.0.0.1:0', `--web.config.file=${path('cost31.yml')}`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cost31\.yml:3: basic_auth_users\.eve: bcrypt cost 31 is above web\.basicAuth\.maxBcryptCost \(14\)/);
  });

  it('the bound is the config: 15 is refused by default and taken with maxBcryptCost: 15', () => {
    const text = `basic_auth_users:\n  alice: ${hashOfCost(15)}\n`;
    expect(() => parseWebConfig(text, path('c15.yml'))).toThrow(/bcrypt cost 15 is above/);
    expect(parseWebConfig(text, path('c15.yml'), { maxBcryptCost: 15 }).basicAuthUsers.size).toBe(1);
  });
});

describe('min_version Node cannot honour: TLS10 was accepted and had no effect', () => {
  it('TLS10 and TLS11 are refused with the reason', () => {
    for (const v of ['TLS10', 'TLS11']) {
      expect(() => parseWebConfig(`tls_server_config:\n  cert: x\n  key: y\n  min_version: ${v}\n`, path('v.yml'))).toThrow(
        new RegExp(`v\\.yml:4: tls_server_config\\.min_version: ${v} is refused: .*default security level`),
      );
    }
  });
});

describe('special files in config paths: key_file: /dev/zero grew to 6.5 GB and aborted', () => {
  beforeAll(() => {
    makeCertificates(dir);
    execFileSync('mkfifo', [path('fifo')]);
  });

  const serveExit = (args: string[]) => {
    const r = runCli(['serve', '--web.listen-address=127.0.0.1:0', ...args]);
    return { code: r.code, stderr: r.stderr };
  };

  it('TLS material that is a device, a FIFO or a directory: exit 2 naming the key and what the path is', () => {
    const cases: [string, string, RegExp][] = [
      ['key_file', '/dev/zero', /tls_server_config\.key_file: \/dev\/zero: not a regular file \(a character device\)/],
      ['cert_file', path('fifo'), /tls_server_config\.cert_file: .*fifo: not a regular file \(a FIFO\)/],
      ['key_file', dir, /tls_server_config\.key_file: .*: not a regular file \(a directory\)/],
    ];
    for (const [key, target, message] of cases) {
      const files = { cert_file: path('server.crt'), key_file: path('server.key'), [key]: target };
      writeFileSync(path('tls.yml'), `tls_server_config:\n  cert_file: ${files.cert_file}\n  key_file: ${files.key_file}\n`);
      const r = serveExit([`--web.config.file=${path('tls.yml')}`]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    writeFileSync(path('ca.yml'), `tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: /dev/urandom\n`);
    expect(serveExit([`--web.config.file=${path('ca.yml')}`]).stderr).toMatch(/client_ca_file: \/dev\/urandom: not a regular file/);
  });

  it('--config.file and --web.config.file that are a device or a FIFO: exit 2, no read, no hang', () => {
    for (const flag of ['--config.file', '--web.config.file']) {
      for (const target of ['/dev/zero', path('fifo')]) {
        const r = serveExit([`${flag}=${target}`]);
        expect(r.code, `${flag}=${target}: ${r.stderr}`).toBe(2);
        expect(r.stderr).toMatch(/: \(top level\): not a regular file \(a (character device|FIFO)\)/);
      }
    }
    const report = runCli(['report', '--config.file=/dev/zero', '-'], '');
    expect(report.code).toBe(2);
  });

  it('a config file past 1 MiB is refused, not read', () => {
    writeFileSync(path('huge.yml'), `# ${'x'.repeat(1024 * 1024)}\n`);
    const r = serveExit([`--config.file=${path('huge.yml')}`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/huge\.yml: \(top level\): \d+ bytes, more than the 1048576 a config file may have/);
  });

  it('gate and ingest bearer token files that are a device or a FIFO: exit 2 naming the key', () => {
    for (const [section, target] of [
      ['gate', '/dev/zero'],
      ['ingest', path('fifo')],
    ] as const) {
      writeFileSync(path('tokens.yml'), `${section}:\n  bearerTokenFile: ${target}\n${section === 'ingest' ? '  enabled: true\n' : ''}`);
      const r = serveExit([`--config.file=${path('tokens.yml')}`]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(new RegExp(`${section}\\.bearerTokenFile: the ${section} bearer token file .*: not a regular file`));
    }
  });
});
