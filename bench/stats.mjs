// The summary statistics the bench scripts report (one definition, so every table means the same by them).

/** The median (the mean of the two middle values for an even count); NaN for none. */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? NaN : s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The q-quantile as the nearest-rank value (the p99 of 60 scrapes is their slowest); NaN for none. */
export function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)];
}
