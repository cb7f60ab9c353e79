// The exporter toolkit's `rate_limit`: one token bucket for every request, in front of everything else
// (headers, basic auth), answered as Go's handler answers: 429 "Too Many Requests".
import type { RequestHandler } from 'express';
import { TokenBucket } from './token-bucket.js';
import type { RateLimit } from './web-config.js';

export function rateLimit(limit: RateLimit, clock: () => number = Date.now): RequestHandler {
  const bucket = new TokenBucket(limit.burst, limit.intervalMs, clock);
  return (_req, res, next) => {
    if (bucket.take()) return next();
    const wait = bucket.msUntilToken();
    res
      .status(429)
      .set({ 'X-Content-Type-Options': 'nosniff', ...(Number.isFinite(wait) ? { 'Retry-After': String(Math.max(1, Math.ceil(wait / 1000))) } : {}) })
      .type('text/plain')
      .send('Too Many Requests\n');
  };
}
