// HTTP basic auth against bcrypt hashes (`basic_auth_users` of --web.config.file), in front of every
// endpoint. bcrypt is slow on purpose (cost 10 is ~75 ms of CPU here), so a verified (user, password)
// is remembered for the life of the process, as the exporter toolkit does: a scrape every 15 s then
// costs a SHA-256, not a bcrypt. Failures are never remembered, and at most one bcrypt runs at a time,
// so wrong passwords cannot take more than one core; past a short queue they get 429 at once.
import { createHash } from 'node:crypto';
import bcrypt from 'bcryptjs';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from './logger.js';

export const BASIC_AUTH_REALM = 'zero-plane-exporter';

export interface BasicAuthOptions {
  /** User → bcrypt hash; at least one. */
  users: ReadonlyMap<string, string>;
  log: Logger;
  /** Verifications waiting for bcrypt beyond which requests get 429 (default 32). */
  maxQueued?: number;
  /** Verified credentials remembered at most (default 1024); the memory is dropped whole when full. */
  maxRemembered?: number;
  /** Milliseconds since the epoch; tests inject their own. */
  clock?: () => number;
}

/** Rejections are logged at most this often, with a count of the rest, so a flood cannot flood the log. */
const LOG_INTERVAL_MS = 60_000;

export function basicAuth(opts: BasicAuthOptions): RequestHandler {
  const { users, log } = opts;
  const maxQueued = opts.maxQueued ?? 32;
  const maxRemembered = opts.maxRemembered ?? 1024;
  const clock = opts.clock ?? Date.now;
  const first = users.values().next();
  if (first.done === true) throw new Error('basic auth needs at least one user');
  // An unknown user is checked against a real hash (and then refused), so it takes as long as a known
  // one: the time of a 401 does not tell which user names exist.
  const decoy = first.value;
  const verified = new Set<string>();
  let queue: Promise<unknown> = Promise.resolve();
  let queued = 0;
  let lastLog = -Infinity;
  let unlogged = 0;

  const refuse = (req: Request, res: Response, reason: string): void => {
    const now = clock();
    if (now - lastLog >= LOG_INTERVAL_MS) {
      log.warn('basic auth failed', { reason, path: req.path, remote: req.socket.remoteAddress, ...(unlogged > 0 ? { notLoggedSinceLast: unlogged } : {}) });
      lastLog = now;
      unlogged = 0;
    } else {
      unlogged++;
    }
    res.set('WWW-Authenticate', `Basic realm="${BASIC_AUTH_REALM}"`).status(401).json({ error: reason === 'missing credentials' ? 'authentication required' : 'invalid credentials' });
  };

  return async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const header = req.get('authorization');
    if (header === undefined) return refuse(req, res, 'missing credentials');
    const credentials = parseBasic(header);
    if (credentials === undefined) return refuse(req, res, 'not Basic credentials');
    const { user, password } = credentials;
    const key = createHash('sha256').update(JSON.stringify([user, password])).digest('base64');
    if (verified.has(key)) return next();

    if (queued >= maxQueued) {
      res.set('Retry-After', '1').status(429).json({ error: 'too many logins being checked; retry later' });
      return;
    }
    const hash = users.get(user);
    queued++;
    const check = queue.then(() => bcrypt.compare(password, hash ?? decoy));
    queue = check.catch(() => undefined);
    let ok: boolean;
    try {
      ok = (await check) && hash !== undefined;
    } finally {
      queued--;
    }
    if (!ok) return refuse(req, res, hash === undefined ? 'unknown user' : 'wrong password');
    if (verified.size >= maxRemembered) verified.clear();
    verified.add(key);
    next();
  };
}

/** User and password of `Basic <base64(user:password)>` (RFC 7617), or undefined. */
export function parseBasic(header: string): { user: string; password: string } | undefined {
  const m = /^Basic[ \t]+([A-Za-z0-9+/]+={0,2})[ \t]*$/i.exec(header);
  if (m === null) return undefined;
  const decoded = Buffer.from(m[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

