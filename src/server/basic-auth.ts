// HTTP basic auth against bcrypt hashes (`basic_auth_users` of --web.config.file), in front of every
// endpoint. bcrypt is slow on purpose (cost 10 is ~75 ms of CPU here), so a verified (user, password) is
// remembered for the life of the process, as the exporter toolkit does: a scrape every 15 s then costs a
// SHA-256, not a bcrypt. What an attacker can do with wrong passwords is bounded these ways:
// - checks run on worker threads (bcrypt-verifier.ts), one at a time each: one for addresses with no
//   recent failure in their network, one for the rest. A remembered login never waits for them, a right password from a
//   clean address never waits behind a wrong one, and wrong passwords take at most one core;
// - each client address has a bucket of failed checks (web.basicAuth.failedLogin*), and all addresses
//   together one more (web.basicAuth.globalFailedLogin*): past its own, or past the global one while its
//   address has failed recently, a login gets 429 without a bcrypt;
// - checks wait in a fair queue (fair-queue.ts), round robin by /24 or /64 and then by address, those
//   from networks with no failed login for failedLoginBurst × failedLoginInterval in a lane of their own
//   (a network's first failure moves its waiting checks out of it, and the failing lane pauses while a
//   clean login is checked); web.basicAuth.maxPendingChecks wait at most, of which one network may
//   hold maxPendingChecksPerPrefix and the last knownUserReservedChecks are kept for user names that exist,
//   so wrong passwords from many addresses cannot keep a scraper whose login is not remembered out;
// - a 429 is answered after refusalDelay (1 s, at most its Retry-After; maxHeldRefusals at once): a flood
//   that keeps N logins in flight then asks a few hundred times a second, not thousands, and on a small
//   loaded machine those answers were what a right password's check waited behind;
// - every check costs the same whatever the user name: an unknown user is checked against a hash of the
//   highest cost configured, and a user whose hash is cheaper pays the difference in extra hashes, so the
//   time of a 401 does not tell which names exist.
import { createHash } from 'node:crypto';
import bcrypt from 'bcryptjs';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { CounterFamily } from '../metrics/families.js';
import { bcryptCost } from './bcrypt-cost.js';
import { BcryptWorker, type Verifier } from './bcrypt-verifier.js';
import type { Logger } from './logger.js';
import { FairQueue, networkPrefix, type Lane } from './fair-queue.js';
import { KeyedBuckets, TokenBucket } from './token-bucket.js';

export const BASIC_AUTH_REALM = 'zero-plane-exporter';

export interface BasicAuthLimits {
  /** Failed checks a client address may have in a row before it gets 429 without a check. */
  failedLoginBurst: number;
  /** …and one more per this many milliseconds. */
  failedLoginIntervalMs: number;
  /** Checks waiting for the bcrypt thread beyond which logins get 429. */
  maxPendingChecks: number;
  /** Of those, at most this many from one /24 (IPv4) or /64 (IPv6). */
  maxPendingChecksPerPrefix: number;
  /** The last this many of maxPendingChecks only for user names that exist. */
  knownUserReservedChecks: number;
  /** Failed checks all addresses together may have in a row… */
  globalFailedLoginBurst: number;
  /** …and one more per this many milliseconds; past it only addresses with no recent failure are checked. */
  globalFailedLoginIntervalMs: number;
  /** A 429 is answered after this long (at most its Retry-After), so a client that retries at once retries slowly; 0 = at once. */
  refusalDelayMs: number;
  /** 429s held back at most at once; past it they are answered at once (each held one is a socket). */
  maxHeldRefusals: number;
}

export const DEFAULT_BASIC_AUTH_LIMITS: BasicAuthLimits = {
  failedLoginBurst: 10,
  failedLoginIntervalMs: 6_000,
  maxPendingChecks: 32,
  maxPendingChecksPerPrefix: 16,
  knownUserReservedChecks: 4,
  globalFailedLoginBurst: 60,
  globalFailedLoginIntervalMs: 250,
  refusalDelayMs: 1_000,
  maxHeldRefusals: 1024,
};

export interface BasicAuthOptions {
  /** User → bcrypt hash; at least one. */
  users: ReadonlyMap<string, string>;
  log: Logger;
  limits?: BasicAuthLimits;
  /** Verified credentials remembered at most (default 1024); the memory is dropped whole when full. */
  maxRemembered?: number;
  /** Client addresses whose failures are tracked at most (default 4096). */
  maxClients?: number;
  /** Milliseconds since the epoch; tests inject their own. */
  clock?: () => number;
  /** Where bcrypt runs (default a worker thread per lane of the queue). */
  verifier?: Verifier;
}

/** The middleware, its self-metric and a way to stop its thread. */
export interface BasicAuth {
  handler: RequestHandler;
  /** zero_plane_exporter_basic_auth_checks_total{result}: verified, failed, throttled. */
  checks: CounterFamily;
  close(): Promise<void>;
}

/**
 * The nice value of the thread that checks logins from networks that failed recently: wrong passwords get
 * a tenth of the CPU share of a normal thread (CFS weight 110 against 1024), so a flood of them on a small
 * machine cannot slow the event loop (scrapes, health probes) or the clean lane's thread. Not 19 (weight
 * 15, what nothing else wants): beside two busy processes a check then took seconds and 10 took over a
 * minute, and this lane holds right passwords too (a scraper in a network that failed recently, after a
 * password change or beside a guesser), which must still be checked on a busy machine.
 */
const FAILING_LANE_NICE = 10;

/** Rejections are logged at most this often, with a count of the rest, so a flood cannot flood the log. */
const LOG_INTERVAL_MS = 60_000;

export function basicAuth(opts: BasicAuthOptions): BasicAuth {
  const { users, log } = opts;
  const limits = opts.limits ?? DEFAULT_BASIC_AUTH_LIMITS;
  const maxRemembered = opts.maxRemembered ?? 1024;
  const clock = opts.clock ?? Date.now;
  // One thread for logins from addresses with no recent failure, one for the rest: a right password
  // never waits behind a wrong one's bcrypt, and wrong passwords still take at most one core.
  const verifiers: Record<Lane, Verifier> =
    opts.verifier === undefined ? { clean: new BcryptWorker(), failing: new BcryptWorker(FAILING_LANE_NICE) } : { clean: opts.verifier, failing: opts.verifier };
  // The clean lane's thread is started now, not by the first login: after a restart that first login is
  // the scraper's, and a thread start (and bcryptjs loaded into it) on a loaded machine is most of a second.
  verifiers.clean.warm?.();
  if (users.size === 0) throw new Error('basic auth needs at least one user');
  const { decoy, padSalts } = equalCost(users);
  const verified = new Set<string>();
  const failures = new KeyedBuckets(limits.failedLoginBurst, limits.failedLoginIntervalMs, opts.maxClients ?? 4096, clock);
  const checks = new CounterFamily('zero_plane_exporter_basic_auth_checks_total', 'Basic auth logins checked with bcrypt (verified, failed) or refused with 429 before a check (throttled).', [
    'result',
  ]);
  for (const result of ['verified', 'failed', 'throttled']) checks.touch([result]);
  const maxClients = opts.maxClients ?? 4096;
  /** Network prefix → when a login from it last failed (the oldest dropped past maxClients). */
  const lastFailure = new Map<string, number>();
  const globalFailures = new TokenBucket(limits.globalFailedLoginBurst, limits.globalFailedLoginIntervalMs, clock);
  // Checks waiting, and whether one is on the thread: one at a time, so the queue decides the order.
  // An item is called with the lane it is run in: a network's first failure moves its waiting checks to the failing lane.
  const queue = new FairQueue<(lane: Lane) => Promise<void>>();
  const running: Record<Lane, boolean> = { clean: false, failing: false };
  let closed = false;
  const runNext = (lane: Lane): void => {
    if (running[lane] || closed) return;
    // The failing lane waits while a clean login is being checked or waits for its check: on a loaded
    // machine the two threads compete for the same few CPU slices, and the right password's must win.
    if (lane === 'failing' && (running.clean || queue.sizeOf('clean') > 0)) return;
    const next = queue.shift(lane);
    if (next === undefined) return;
    running[lane] = true;
    void next(lane).finally(() => {
      running[lane] = false;
      runNext(lane);
      if (lane === 'clean') runNext('failing');
    });
  };
  let lastLog = -Infinity;
  let unlogged = 0;

  const logRejection = (req: Request, reason: string): void => {
    const now = clock();
    if (now - lastLog >= LOG_INTERVAL_MS) {
      log.warn('basic auth failed', { reason, path: req.path, remote: req.socket.remoteAddress, ...(unlogged > 0 ? { notLoggedSinceLast: unlogged } : {}) });
      lastLog = now;
      unlogged = 0;
    } else {
      unlogged++;
    }
  };
  const refuse = (req: Request, res: Response, reason: string): void => {
    logRejection(req, reason);
    res
      .set('WWW-Authenticate', `Basic realm="${BASIC_AUTH_REALM}"`)
      .status(401)
      .json({ error: reason === 'missing credentials' ? 'authentication required' : 'invalid credentials' });
  };
  // Answers held back (their timers), so a flood of refusals cannot hold more than maxHeldRefusals sockets.
  const holds = new Set<NodeJS.Timeout>();
  const throttle = (req: Request, res: Response, reason: string, retryAfterMs: number): void => {
    checks.inc(['throttled']);
    logRejection(req, reason);
    const answer = () => {
      if (!res.destroyed)
        res
          .set('Retry-After', String(Math.max(1, Math.ceil(retryAfterMs / 1000))))
          .status(429)
          .json({ error: `${reason}; retry later` });
    };
    // A client told to retry later that sends its next login the moment the 429 arrives (a flood keeps N
    // in flight) otherwise gets thousands of answers a second, and on a small busy machine that work is
    // what a right password's check waits behind. Held, the same N sockets cost a few answers a second.
    const delay = Math.min(limits.refusalDelayMs, retryAfterMs);
    if (delay <= 0 || holds.size >= limits.maxHeldRefusals || closed) return answer();
    const timer = setTimeout(() => {
      holds.delete(timer);
      answer();
    }, delay);
    holds.add(timer);
  };

  const handler = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const header = req.get('authorization');
    if (header === undefined) return refuse(req, res, 'missing credentials');
    const credentials = parseBasic(header);
    if (credentials === undefined) return refuse(req, res, 'not Basic credentials');
    const { user, password } = credentials;
    const key = createHash('sha256')
      .update(JSON.stringify([user, password]))
      .digest('base64');
    // A remembered login goes on at once: nothing below (buckets, the queue, the thread) is in its way.
    if (verified.has(key)) return next();

    // The token is taken before the check, so concurrent wrong passwords from one client cannot all
    // start checks before the first of them fails; a login that succeeds gives it back.
    const address = req.socket.remoteAddress ?? '';
    const bucket = failures.bucket(address);
    const prefix = networkPrefix(address);
    // A network with no failed login for as long as an address's bucket takes to refill: a scraper, not a
    // guesser. It has the clean lane and its thread, and the global limit does not hold it.
    const failedAt = lastFailure.get(prefix);
    const clean = failedAt === undefined || clock() - failedAt >= limits.failedLoginBurst * limits.failedLoginIntervalMs;
    if (!bucket.take()) return throttle(req, res, 'too many failed logins from this address', bucket.msUntilToken());
    const hash = users.get(user);
    const refusal =
      !clean && globalFailures.msUntilToken() > 0
        ? 'too many failed logins overall'
        : queue.size + Number(running.clean) + Number(running.failing) >= limits.maxPendingChecks - (hash === undefined ? limits.knownUserReservedChecks : 0)
          ? 'too many logins being checked'
          : queue.waitingFrom(prefix) >= limits.maxPendingChecksPerPrefix
            ? 'too many logins being checked from this network'
            : undefined;
    if (refusal !== undefined) {
      bucket.giveBack();
      return throttle(req, res, refusal, refusal === 'too many failed logins overall' ? globalFailures.msUntilToken() : 1000);
    }
    let ok: boolean;
    try {
      const lane: Lane = clean ? 'clean' : 'failing';
      ok = await new Promise<boolean>((resolve, reject) => {
        queue.push(lane, prefix, address, (runIn) =>
          verifiers[runIn].verify(password, hash ?? decoy, padSalts.get(hash ?? decoy) ?? []).then((matched) => resolve(matched && hash !== undefined), reject),
        );
        runNext(lane);
      });
    } catch (err) {
      bucket.giveBack();
      log.error('bcrypt check failed', { error: (err as Error).message });
      res.status(503).json({ error: 'login could not be checked; retry' });
      return;
    }
    checks.inc([ok ? 'verified' : 'failed']);
    if (!ok) {
      globalFailures.take();
      lastFailure.delete(prefix);
      if (lastFailure.size >= maxClients) lastFailure.delete(lastFailure.keys().next().value as string);
      lastFailure.set(prefix, clock());
      queue.demote(prefix);
      return refuse(req, res, hash === undefined ? 'unknown user' : 'wrong password');
    }
    bucket.giveBack();
    if (verified.size >= maxRemembered) verified.clear();
    verified.add(key);
    next();
  };
  return {
    handler: (req, res, next) => void handler(req, res, next),
    checks,
    close: async () => {
      // Checks still waiting are dropped: their connections are closed, and the process must exit now.
      closed = true;
      queue.clear();
      for (const timer of holds) clearTimeout(timer);
      holds.clear();
      await verifiers.clean.close();
      if (verifiers.failing !== verifiers.clean) await verifiers.failing.close();
    },
  };
}

/**
 * The decoy an unknown user is checked against (a configured hash of the highest cost) and, per hash, the
 * salts of the padding hashes that bring its check to that cost: costs c, c+1, …, max−1 add up to
 * 2^max − 2^c, so c plus them is 2^max whatever c was.
 */
export function equalCost(users: ReadonlyMap<string, string>): { decoy: string; maxCost: number; padSalts: Map<string, string[]> } {
  let decoy = '';
  let maxCost = -1;
  for (const hash of users.values()) {
    const cost = bcryptCost(hash);
    if (cost > maxCost) {
      maxCost = cost;
      decoy = hash;
    }
  }
  const saltOf = new Map<number, string>();
  const padSalts = new Map<string, string[]>();
  for (const hash of users.values()) {
    const salts: string[] = [];
    for (let cost = bcryptCost(hash); cost < maxCost; cost++) {
      let salt = saltOf.get(cost);
      if (salt === undefined) {
        salt = bcrypt.genSaltSync(cost);
        saltOf.set(cost, salt);
      }
      salts.push(salt);
    }
    padSalts.set(hash, salts);
  }
  return { decoy, maxCost, padSalts };
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
