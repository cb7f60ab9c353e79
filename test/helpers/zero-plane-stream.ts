// A live test's gateway traffic: every 100 ms, 20 Zero-Plane hits of `claude-zp` on /v1/messages appended
// to a log, stamped now. Healthy: all at 180 ms. Drifting: the first of each batch degraded, and those
// `slow(i)` picks at 250 ms, above the 194.25 ms ceiling.
import { appendFileSync } from 'node:fs';

export interface BatchShape {
  /** Which of the 20 requests of a drifting batch are slow. */
  slow: (i: number) => boolean;
  /** The cohort of request i, if the lines carry one. */
  cohort?: (i: number) => string;
}

export class ZeroPlaneStream {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: string,
    private readonly shape: BatchShape,
  ) {}

  /** Streams `kind` from now on, in place of what was streamed before. */
  start(kind: 'healthy' | 'drifting'): void {
    this.stop();
    this.timer = setInterval(() => appendFileSync(this.log, this.batch(kind === 'drifting')), 100);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private batch(drifting: boolean): string {
    let body = '';
    for (let i = 0; i < 20; i++) {
      const profile = drifting && i === 0 ? 'warmup=hit, degraded' : 'warmup=hit';
      body += `${JSON.stringify({
        ts: Date.now() / 1000,
        latency_ms: drifting && this.shape.slow(i) ? 250 : 180,
        status: 200,
        model: 'claude-zp',
        route: '/v1/messages',
        ...(this.shape.cohort === undefined ? {} : { cohort: this.shape.cohort(i) }),
        response_headers: { 'x-anthropic-layer-id': 'zero-plane-v1', 'x-anthropic-delay-profile': profile },
      })}\n`;
    }
    return body;
  }
}
