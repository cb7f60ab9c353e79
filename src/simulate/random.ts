// Seeded randomness for the simulator and the load generator, so tests and demos can be replayed.
import { randomInt } from 'node:crypto';

/** A source of uniform numbers in [0, 1), like Math.random. */
export type Rng = () => number;

/** mulberry32: small, fast, good enough for latency jitter and mix draws (not for secrets). */
export function createRng(seed: number = randomInt(2 ** 32)): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** True with probability p (p ≤ 0 never, p ≥ 1 always). */
export function chance(rng: Rng, p: number): boolean {
  return p > 0 && rng() < p;
}

/** A standard normal draw (Box–Muller). */
export function standardNormal(rng: Rng): number {
  const u1 = 1 - rng(); // (0, 1]: log(0) never happens
  const u2 = rng();
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

/** A whole number in [min, max]. */
export function intBetween(rng: Rng, min: number, max: number): number {
  return min + Math.floor(rng() * (max - min + 1));
}

export function pick<T>(rng: Rng, items: readonly T[]): T {
  if (items.length === 0) throw new Error('pick from an empty list');
  return items[Math.min(items.length - 1, Math.floor(rng() * items.length))] as T;
}

/** One key of `weights`, with probability proportional to its weight. */
export function weightedPick(rng: Rng, weights: Readonly<Record<string, number>>): string {
  const entries = Object.entries(weights).filter(([, w]) => w > 0);
  const total = entries.reduce((sum, [, w]) => sum + w, 0);
  if (entries.length === 0 || !(total > 0)) throw new Error('weightedPick needs at least one positive weight');
  let r = rng() * total;
  for (const [key, w] of entries) {
    r -= w;
    if (r < 0) return key;
  }
  return (entries[entries.length - 1] as [string, number])[0];
}

/** Yes/no draws by name, each true with its probability: random, or spread evenly (`EvenDraws`). */
export interface Draws {
  chance(kind: string, p: number): boolean;
}

/** Independent draws from `rng`. */
export function randomDraws(rng: Rng): Draws {
  return { chance: (_kind, p) => chance(rng, p) };
}

/**
 * Draws spread as evenly as a share allows: per kind, true exactly when the running sum of p passes a
 * whole number (error diffusion), so any run of n draws has floor(n·p) or ceil(n·p) of them true. The
 * demo uses these: 0.2 % malformed opt-ins are one request in 500, not a cluster that turns a short
 * window's hit rate red by chance.
 */
export class EvenDraws implements Draws {
  private readonly owed = new Map<string, number>();

  chance(kind: string, p: number): boolean {
    if (p <= 0) return false;
    if (p >= 1) return true;
    // Starting at ½ rounds the count to the nearest whole number from the first draw on.
    const due = (this.owed.get(kind) ?? 0.5) + p;
    const yes = due >= 1;
    this.owed.set(kind, yes ? due - 1 : due);
    return yes;
  }
}
