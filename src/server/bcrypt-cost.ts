// The cost of a bcrypt hash ("$2y$10$…" → 10): what one verification of it costs, doubling per step.

/** The cost field of a `$2a$`/`$2b$`/`$2y$` hash; NaN when it has none. */
export function bcryptCost(hash: string): number {
  const m = /^\$2[aby]\$(\d\d)\$/.exec(hash);
  return m === null ? Number.NaN : Number(m[1]);
}
