// The Prometheus text format of our families, written directly. prom-client formatted every label of
// every series on every scrape (~15 of ~17 ms at 5,300 series); here a series' label text is escaped once
// and kept, and values are written as prom-client writes them, so the output is the same text.
/**
 * A family's text is handed out in pieces of about this many characters (cut between series), so that
 * /metrics never builds the whole body as one string: V8 caps a string at ~512 MiB ("Invalid string
 * length"), and one piece at a time also lets the response be written with back-pressure.
 */
export const EXPOSITION_CHUNK_CHARS = 64 * 1024;

/**
 * A family's text, collected as parts and handed out as flat strings of about EXPOSITION_CHUNK_CHARS. Joined
 * once per piece rather than grown with `+=`: a string grown a line at a time is a deep rope, and flattening
 * it to write it cost more than building it (~45 of ~55 ms at 46k series).
 */
export class TextPieces {
  private parts: string[] = [];
  private length = 0;

  add(text: string): void {
    this.parts.push(text);
    this.length += text.length;
  }

  /** The text collected so far once it reaches a piece's size (or whatever there is, when `last`), else undefined. */
  take(last = false): string | undefined {
    if (this.length === 0 || (!last && this.length < EXPOSITION_CHUNK_CHARS)) return undefined;
    const piece = this.parts.join('');
    this.parts = [];
    this.length = 0;
    return piece;
  }
}

/**
 * A family's exposition in pieces of about EXPOSITION_CHUNK_CHARS, cut between series: its header, then
 * what `write` adds for each series (a histogram's buckets stay in one piece).
 */
export function* piecesOf<S>(header: string, series: Iterable<S>, write: (out: TextPieces, s: S) => void): Generator<string> {
  const out = new TextPieces();
  out.add(header);
  for (const s of series) {
    write(out, s);
    const piece = out.take();
    if (piece !== undefined) yield piece;
  }
  const last = out.take(true);
  if (last !== undefined) yield last;
}

/** Label pairs as they appear between the braces: `a="x",b="y"`, escaped like prom-client. */
export function labelText(names: readonly string[], values: readonly string[]): string {
  let out = '';
  for (let i = 0; i < names.length; i++) out += `${i === 0 ? '' : ','}${names[i] as string}="${escapeLabelValue(values[i] as string)}"`;
  return out;
}

/** A sample value as prom-client writes it (`Nan`, `+Inf`, `-Inf`, else the number). */
export function valueText(v: number): string {
  if (Number.isNaN(v)) return 'Nan';
  if (!Number.isFinite(v)) return v < 0 ? '-Inf' : '+Inf';
  return `${v}`;
}

/** The `# HELP` and `# TYPE` lines of a family. */
export function familyHeader(name: string, help: string, type: string): string {
  return `# HELP ${escapeString(name)} ${escapeString(help)}\n# TYPE ${escapeString(name)} ${type}`;
}

function escapeString(s: string): string {
  return s.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function escapeLabelValue(s: string): string {
  return escapeString(s).replace(/"/g, '\\"');
}
