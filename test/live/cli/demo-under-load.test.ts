// `demo` (what `npm start` runs) on a busy machine: two processes spinning on the CPU beside it. The
// simulator and load generator run in their own process, so the four verdicts of /api/v1/signals stay
// healthy with no fault, and turn unhealthy (the P0) once drift and degraded answers are injected from
// the page's API; the injection reaches the simulator, and no traffic process outlives the demo.
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SignalsResponse } from '../../../src/landing/landing-router.js';
import { startCommand, waitFor, type ServeProcess } from '../../helpers/cli-process.js';

const hogs: ChildProcess[] = [];
let demo: ServeProcess;
let trafficPid: number;
let simulatorUrl: string;

async function signals(): Promise<SignalsResponse> {
  const res = await fetch(`${demo.url}/api/v1/signals`, { signal: AbortSignal.timeout(5_000) });
  return (await res.json()) as SignalsResponse;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function startDemo(): Promise<{ demo: ServeProcess; trafficPid: number; simulatorUrl: string }> {
  const d = await startCommand('demo', ['--web.listen-address=127.0.0.1:0', '--seed=15'], 20_000);
  const running = await waitFor(() => d.logs.find((l) => l.msg === 'demo running'), 10_000, 'the demo to say it runs');
  return { demo: d, trafficPid: running.trafficPid as number, simulatorUrl: String(running.simulator).replace(/\/v1\/messages$/, '') };
}

beforeAll(async () => {
  for (let i = 0; i < 2; i++) hogs.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  ({ demo, trafficPid, simulatorUrl } = await startDemo());
}, 40_000);

afterAll(async () => {
  for (const h of hogs) h.kill('SIGKILL');
  await demo?.stop('SIGKILL');
  if (trafficPid !== undefined && alive(trafficPid)) process.kill(trafficPid, 'SIGKILL');
});

describe('demo beside two busy processes', () => {
  it('the simulator and load generator run in a process of their own', () => {
    expect(trafficPid).toBeGreaterThan(0);
    expect(trafficPid).not.toBe(demo.child.pid);
    expect(alive(trafficPid)).toBe(true);
  });

  it('stays healthy with no fault, and shows the P0 once drift and degraded answers are injected', async () => {
    // Enough of a window to judge: 200 requests (10 s at the demo's 20/s).
    await waitFor(async () => ((await signals()).window.requests >= 200 ? true : undefined), 30_000, 'the window to fill');
    const healthyUntil = Date.now() + 15_000;
    while (Date.now() < healthyUntil) {
      const s = await signals();
      expect(s.verdicts, JSON.stringify(s.window)).toEqual({ hitRate: 'healthy', p99Drift: 'healthy', degraded: 'healthy', warmupEfficiency: 'healthy', p0: false });
      await new Promise((r) => setTimeout(r, 1_000));
    }

    const put = await fetch(`${demo.url}/api/v1/demo/faults`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ latencyDriftRatio: 0.15, degradedRate: 0.2 }),
    });
    expect(put.status).toBe(200);
    // The page's faults are the simulator's (they run in different processes).
    await waitFor(
      async () => {
        const f = (await (await fetch(`${simulatorUrl}/admin/faults`)).json()) as { latencyDriftRatio: number };
        return f.latencyDriftRatio === 0.15 ? true : undefined;
      },
      5_000,
      'the faults to reach the simulator',
    );
    const p0 = await waitFor(
      async () => {
        const s = await signals();
        return s.verdicts.p0 ? s : undefined;
      },
      30_000,
      'the P0 to show',
    );
    expect(p0.verdicts).toMatchObject({ p99Drift: 'unhealthy', degraded: 'unhealthy' });

    // A fault set on the simulator's own /admin/faults shows on the page too.
    await fetch(`${simulatorUrl}/admin/faults`, { method: 'DELETE' });
    await waitFor(async () => ((await signals()).faults?.latencyDriftRatio === 0 ? true : undefined), 5_000, 'the cleared faults to reach the page');
  }, 90_000);

  it('takes its traffic process with it when it stops, and when it is killed', async () => {
    expect(await demo.stop('SIGTERM')).toBe(0);
    await waitFor(() => (alive(trafficPid) ? undefined : true), 10_000, 'the traffic process to exit with the demo');

    ({ demo, trafficPid, simulatorUrl } = await startDemo());
    expect(alive(trafficPid)).toBe(true);
    await demo.stop('SIGKILL');
    await waitFor(() => (alive(trafficPid) ? undefined : true), 10_000, 'the traffic process to exit once the demo is gone');
  }, 60_000);
});
