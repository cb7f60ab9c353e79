// accept-first.ts without a socket: a server is an EventEmitter that emits 'connection' as net.Server does.
import { EventEmitter } from 'node:events';
import type { Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { AcceptFirst, MAX_DEFER_MS, probesFirst, watchAccepts } from '../../../src/server/accept-first.js';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('AcceptFirst', () => {
  const server = new EventEmitter();
  watchAccepts(server as unknown as Server);

  it('defers while connections are accepted, not once a turn passes without one, each caller seeing each accept', () => {
    const render = new AcceptFirst();
    const writes = new AcceptFirst();
    expect(render.shouldDefer()).toBe(false);
    server.emit('connection', {});
    expect(render.shouldDefer()).toBe(true);
    expect(writes.shouldDefer()).toBe(true);
    expect(render.shouldDefer()).toBe(false);
    expect(writes.shouldDefer()).toBe(false);
  });

  it('after MAX_DEFER_MS of deferring in a row, the work runs undeferred for as long again', async () => {
    const work = new AcceptFirst();
    const t0 = performance.now();
    let deferred = 0;
    for (;;) {
      server.emit('connection', {});
      if (!work.shouldDefer()) break;
      deferred++;
      await turn();
    }
    expect(performance.now() - t0).toBeGreaterThanOrEqual(MAX_DEFER_MS);
    expect(deferred).toBeGreaterThan(0);
    // A storm goes on, yet the work is not deferred now.
    server.emit('connection', {});
    expect(work.shouldDefer()).toBe(false);
  });
});

describe('probesFirst', () => {
  it('handles /-/healthy and /-/ready in the turn that read them, everything else in a later turn, in order', async () => {
    const handled: string[] = [];
    const handle = probesFirst<{ url?: string }, undefined>((req) => handled.push(req.url ?? ''));
    handle({ url: '/metrics' }, undefined);
    handle({ url: '/-/healthy' }, undefined);
    handle({ url: '/' }, undefined);
    handle({ url: '/-/ready?verbose=1' }, undefined);
    expect(handled).toEqual(['/-/healthy', '/-/ready?verbose=1']);
    await turn();
    await turn();
    expect(handled).toEqual(['/-/healthy', '/-/ready?verbose=1', '/metrics', '/']);
  });
});
