// Reads a scrape back: every sample with its name, label values (unescaped) and value, and the label
// sets of each family, so tests can count series and measure label values as Prometheus would see them.

export interface ParsedSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Every sample line of a text-format body (comments and blank lines skipped). */
export function parseSamples(text: string): ParsedSample[] {
  const out: ParsedSample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const brace = line.indexOf('{');
    const space = line.indexOf(' ');
    if (brace < 0 || brace > space) {
      out.push({ name: line.slice(0, space), labels: {}, value: Number(line.slice(space + 1)) });
      continue;
    }
    const labels: Record<string, string> = {};
    let i = brace + 1;
    while (line[i] !== '}') {
      const eq = line.indexOf('=', i);
      const name = line.slice(i, eq);
      if (line[eq + 1] !== '"') throw new Error(`bad label in: ${line.slice(0, 200)}`);
      let value = '';
      let j = eq + 2;
      for (; line[j] !== '"'; j++) {
        if (j >= line.length) throw new Error(`unterminated label value in: ${line.slice(0, 200)}`);
        if (line[j] === '\\') {
          j++;
          value += line[j] === 'n' ? '\n' : line[j];
        } else {
          value += line[j];
        }
      }
      labels[name] = value;
      i = j + 1;
      if (line[i] === ',') i++;
    }
    out.push({ name: line.slice(0, brace), labels, value: Number(line.slice(i + 2)) });
  }
  return out;
}

/** The family a sample belongs to: a histogram's _bucket, _sum and _count are one family. */
export function familyOf(sample: ParsedSample, histograms: readonly string[]): string {
  for (const h of histograms) if (sample.name === `${h}_bucket` || sample.name === `${h}_sum` || sample.name === `${h}_count`) return h;
  return sample.name;
}

/** Distinct label sets per family (a histogram's `le` left out, so one label set is one series of buckets). */
export function labelSetsPerFamily(samples: readonly ParsedSample[], histograms: readonly string[]): Map<string, number> {
  const sets = new Map<string, Set<string>>();
  for (const s of samples) {
    const family = familyOf(s, histograms);
    const { le: _le, ...rest } = s.labels;
    const key = JSON.stringify(family === s.name ? s.labels : rest);
    let set = sets.get(family);
    if (set === undefined) sets.set(family, (set = new Set()));
    set.add(key);
  }
  return new Map([...sets].map(([f, s]) => [f, s.size]));
}

/** Sum of a family's samples whose labels include `where`. */
export function sumOf(samples: readonly ParsedSample[], name: string, where: Record<string, string> = {}): number {
  let total = 0;
  for (const s of samples) if (s.name === name && Object.entries(where).every(([k, v]) => s.labels[k] === v)) total += s.value;
  return total;
}
