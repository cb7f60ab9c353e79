// `demo --demo.simulator-address`: the demo's simulated endpoint listens where the user says (a fixed
// port to point an SDK or curl at), and a bad address is bad usage before anything starts.
import { afterEach, describe, expect, it } from 'vitest';
import { HEALTH_PATH } from '../../../src/simulate/protocol.js';
import { runCli, startCommand, waitFor, type ServeProcess } from '../../helpers/cli-process.js';
import { freePort } from '../../helpers/processes.js';

let demo: ServeProcess | undefined;

afterEach(async () => {
  await demo?.stop('SIGTERM');
  demo = undefined;
});

describe('demo --demo.simulator-address', () => {
  it('puts the simulated endpoint on the address given', async () => {
    const port = await freePort();
    demo = await startCommand('demo', ['--web.listen-address=127.0.0.1:0', `--demo.simulator-address=127.0.0.1:${port}`, '--seed=3'], 20_000);
    const running = await waitFor(() => demo?.logs.find((l) => l.msg === 'demo running'), 15_000, 'the demo to say it runs');
    expect(running.simulator).toBe(`http://127.0.0.1:${port}/v1/messages`);
    const health = await fetch(`http://127.0.0.1:${port}${HEALTH_PATH}`, { signal: AbortSignal.timeout(5_000) });
    expect(health.status).toBe(200);
  });

  it('a bad address exits 2 naming the flag', () => {
    const r = runCli(['demo', '--web.listen-address=127.0.0.1:0', '--demo.simulator-address=nowhere']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--demo.simulator-address: "nowhere" is not HOST:PORT or :PORT');
  });
});
