// One string order for every sorted output: by UTF-16 code units, the same on every machine (localeCompare
// follows the process's locale), and no ICU collator to load (its first call cost ~10 ms of start-up).

/** a before b by UTF-16 code units: -1, 0 or 1, for Array.prototype.sort. */
export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
