// One exposition of several pipelines' families of the same names: the base pipeline's series as they are,
// then those of each labelled pipeline (the OTLP receiver's, one per resource label set) with that set's
// labels first in every series. The text format wants every series of a family under its one HELP/TYPE
// block, so a family is written once, the labelled series after the base's. Nothing here runs per line.
import type { Exposable } from './registry.js';
import { labelText } from './exposition.js';

/** A label set and the families (same names as the base ones) whose series carry it. */
export interface LabelledFamilies {
  readonly names: readonly string[];
  readonly values: readonly string[];
  /** By family name. */
  readonly families: ReadonlyMap<string, Exposable>;
}

/**
 * The base families, each followed by the series of the same family in each labelled set (read at each
 * scrape: sets appear while serving). A family a set does not have is written as the base's alone.
 */
export function withLabelledSets(base: readonly Exposable[], sets: () => Iterable<LabelledFamilies>): Exposable[] {
  return base.map((family) => new MergedFamily(family, sets));
}

class MergedFamily implements Exposable {
  constructor(
    private readonly base: Exposable,
    private readonly sets: () => Iterable<LabelledFamilies>,
  ) {}

  get name(): string {
    return this.base.name;
  }

  text(): string {
    let out = '';
    for (const c of this.chunks()) out += c;
    return out;
  }

  chunks(): Generator<string> {
    return this.merged((f) => f.chunks?.() ?? [f.text()]);
  }

  openMetricsChunks(created?: boolean): Generator<string> {
    return this.merged((f) => f.openMetricsChunks(created));
  }

  /** The base family's pieces in one format, then each set's series of it in the same format, labelled. */
  private *merged(pieces: (family: Exposable) => Iterable<string>): Generator<string> {
    yield* pieces(this.base);
    for (const set of this.sets()) {
      const family = set.families.get(this.base.name);
      if (family === undefined) continue;
      const labels = labelText(set.names, set.values);
      for (const chunk of pieces(family)) {
        const lines = withLabels(chunk, labels);
        if (lines !== '') yield lines;
      }
    }
  }
}

/**
 * A piece of a family's exposition without its `#` lines, each sample line given `labels` first, each line
 * led by a newline (as the pieces' series lines are). A sample line is `name{…} value` or `name value`: a
 * metric name holds neither `{` nor a space, and label values are escaped, so a line is one sample.
 */
export function withLabels(chunk: string, labels: string): string {
  let out = '';
  for (const line of chunk.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const brace = line.indexOf('{');
    const space = line.indexOf(' ');
    if (brace !== -1 && (space === -1 || brace < space)) out += `\n${line.slice(0, brace + 1)}${labels},${line.slice(brace + 1)}`;
    else out += `\n${line.slice(0, space)}{${labels}}${line.slice(space)}`;
  }
  return out;
}
