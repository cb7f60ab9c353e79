// Preloaded into serve by bench/scrape-flood-probes.mjs (`node --import`): where a probe's wait goes. Records
// the event loop's delay (perf_hooks.monitorEventLoopDelay, 1 ms resolution), each garbage collection's
// pause (kind and length), and on exit writes (counted from SIGUSR2, sent as the flood starts) them as JSON to the file named by ZP_BENCH_LOOP_OUT.
import { writeFileSync } from 'node:fs';
import { Server as HttpServer } from 'node:http';
import { Server as NetServer } from 'node:net';
import { monitorEventLoopDelay, PerformanceObserver, performance } from 'node:perf_hooks';

const out = process.env.ZP_BENCH_LOOP_OUT;
if (out !== undefined) {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const gc = { count: 0, totalMs: 0, maxMs: 0, over20ms: 0, byKind: {} };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      gc.count++;
      gc.totalMs += e.duration;
      gc.maxMs = Math.max(gc.maxMs, e.duration);
      if (e.duration > 20) gc.over20ms++;
      const kind = String(e.detail?.kind ?? e.kind);
      gc.byKind[kind] = (gc.byKind[kind] ?? 0) + e.duration;
    }
  }).observe({ entryTypes: ['gc'] });
  // Per probe (a request with an x-probe header): when serve accepted its connection and when it read its
  // request, in epoch milliseconds, so the bench can split the probe's wait into before accept, accept to
  // request, and after.
  const now = () => performance.timeOrigin + performance.now();
  const probes = {};
  const accepts = [];
  const netEmit = NetServer.prototype.emit;
  NetServer.prototype.emit = function (event, ...args) {
    if (event === 'connection') {
      args[0].zpAcceptedAt = now();
      accepts.push(Math.round(args[0].zpAcceptedAt));
    }
    return netEmit.call(this, event, ...args);
  };
  const httpEmit = HttpServer.prototype.emit;
  HttpServer.prototype.emit = function (event, ...args) {
    if (event === 'request') {
      const id = args[0].headers['x-probe'];
      if (id !== undefined) probes[id] = { acceptedAt: args[0].socket.zpAcceptedAt, requestAt: now() };
    }
    return httpEmit.call(this, event, ...args);
  };
  let elu0 = performance.eventLoopUtilization();
  // The bench sends SIGUSR2 as the flood starts: what came before (reading the log) is not counted.
  process.on('SIGUSR2', () => {
    delay.reset();
    Object.assign(gc, { count: 0, totalMs: 0, maxMs: 0, over20ms: 0, byKind: {} });
    elu0 = performance.eventLoopUtilization();
  });
  process.on('exit', () => {
    const ms = (ns) => Math.round(ns / 1e5) / 10;
    writeFileSync(
      out,
      JSON.stringify({
        loopDelay: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) },
        gc: { ...gc, totalMs: Math.round(gc.totalMs), maxMs: Math.round(gc.maxMs) },
        probes,
        accepts,
        elu: Math.round(performance.eventLoopUtilization(elu0).utilization * 100) / 100,
      }),
    );
  });
}
