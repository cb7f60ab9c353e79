// Reading the repository's Markdown as GitHub renders it: which lines are prose (not inside a fenced
// code block), which anchors its headings get, which links it holds. The docs tests check links and
// anchors with these, so a moved section breaks a test instead of a reader's click.

/** Each line with whether it sits inside a fenced code block (the fence lines themselves count as inside). */
export function linesWithFences(text: string): { line: string; number: number; fenced: boolean }[] {
  let fence: string | undefined;
  return text.split('\n').map((line, i) => {
    const open = /^\s*(`{3,}|~{3,})/.exec(line);
    if (fence === undefined && open !== null) {
      fence = open[1];
      return { line, number: i + 1, fenced: true };
    }
    if (fence !== undefined) {
      if (line.trim().startsWith(fence as string) && line.trim().replace(/[`~]/g, '') === '') fence = undefined;
      return { line, number: i + 1, fenced: true };
    }
    return { line, number: i + 1, fenced: false };
  });
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped (hyphens and underscores kept), each space a hyphen. */
export function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link in a heading anchors on its text
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\p{M} _-]/gu, '').replace(/ /g, '-');
}

/** Every anchor the file's headings give, GitHub's way: a repeated slug gets -1, -2, … */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const { line, fenced } of linesWithFences(text)) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (fenced || m === null) continue;
    const base = slug(m[1] as string);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

export interface Link {
  target: string;
  line: number;
}

/** The inline links and images outside code (fenced blocks and `code spans`), with their line. */
export function links(text: string): Link[] {
  const out: Link[] = [];
  for (const { line, number, fenced } of linesWithFences(text)) {
    if (fenced) continue;
    const prose = line.replace(/`[^`]*`/g, '``');
    for (const m of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push({ target: m[1] as string, line: number });
  }
  return out;
}

/** The body of the first fenced block of language `lang` after the heading that starts with `heading`, before the next heading. */
export function blockUnder(text: string, heading: string, lang: string): string | undefined {
  const lines = text.split('\n');
  const at = lines.findIndex((line) => line.startsWith(heading));
  if (at < 0) return undefined;
  const rest = lines.slice(at + 1);
  const open = rest.findIndex((line) => line.trim() === `\`\`\`${lang}`);
  const nextHeading = rest.findIndex((line) => /^#{1,3} /.test(line));
  if (open < 0 || (nextHeading >= 0 && nextHeading < open)) return undefined;
  const indent = (rest[open] as string).length - (rest[open] as string).trimStart().length;
  const close = rest.findIndex((line, i) => i > open && line.trim() === '```');
  return rest
    .slice(open + 1, close)
    .map((line) => line.slice(indent))
    .join('\n');
}
