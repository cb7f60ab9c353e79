// Per test file: a file under test/unit/ may start no child process and open no listening socket, so that
// `npm run test:unit` stays a fast loop that needs no binary. Doing either there throws, naming the move to
// make (to test/live/<area>/). Files elsewhere are left as they are.
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { afterAll, expect } from 'vitest';

const PROCESS_STARTERS = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;

function refuse(what: string, file: string): never {
  throw new Error(`${file}: a test/unit file ${what}; it belongs in test/live/<area>/ (see vitest.config.ts)`);
}

const file = expect.getState().testPath ?? '';
if (/[/\\]test[/\\]unit[/\\]/.test(file)) {
  // A worker runs several files one after the other and builtins are shared: restore them for the next file.
  const originals = new Map(PROCESS_STARTERS.map((name) => [name, childProcess[name]]));
  const listen = net.Server.prototype.listen;
  for (const name of PROCESS_STARTERS) {
    Object.defineProperty(childProcess, name, { value: () => refuse(`starts a child process (${name})`, file), writable: true, configurable: true });
  }
  net.Server.prototype.listen = function refusedListen(): never {
    refuse('opens a listening socket', file);
  };
  // `import { spawn } from 'node:child_process'` reads the ESM view of the builtin, which only follows on request.
  syncBuiltinESMExports();
  afterAll(() => {
    for (const [name, original] of originals) Object.defineProperty(childProcess, name, { value: original, writable: true, configurable: true });
    net.Server.prototype.listen = listen;
    syncBuiltinESMExports();
  });
}
