// Apache httpd escapes what it logs from headers (mod_log_config's %{…}i and %{…}o go through
// ap_escape_logitem): `"` and `\` get a backslash, \b \n \r \t \v are written in C notation, and every other
// control or non-ASCII byte as \xhh. JSON has no \x and no \v, so a line holding one (an opt-in header with a
// U+200B or a non-breaking space: exactly the defects the opt-in signal counts) is not JSON as written. Such
// a line is rewritten here: each run of \xhh becomes the text its bytes are in UTF-8 (\xe2\x80\x8b is U+200B),
// \v becomes \u000b, and every other escape stays as it is. Only lines JSON.parse refused come here.

const BACKSLASH = 0x5c;
const X = 0x78;
const V = 0x76;

/** The line with Apache's \xhh and \v escapes written as JSON, or undefined when it holds none. */
export function decodeApacheEscapes(line: string): string | undefined {
  let i = line.indexOf('\\');
  if (i < 0) return undefined;
  let out = '';
  let from = 0;
  let changed = false;
  while (i >= 0) {
    const e = line.charCodeAt(i + 1);
    if (e === X && hexByte(line, i) >= 0) {
      // A run of \xhh is one byte sequence: a character's UTF-8 bytes come one escape each.
      const bytes: number[] = [];
      let j = i;
      for (let b = hexByte(line, j); b >= 0; b = hexByte(line, j)) {
        bytes.push(b);
        j += 4;
      }
      out += line.slice(from, i) + jsonText(Buffer.from(bytes).toString('utf8'));
      from = j;
      changed = true;
      i = line.indexOf('\\', j);
    } else if (e === V) {
      out += `${line.slice(from, i)}\\u000b`;
      from = i + 2;
      changed = true;
      i = line.indexOf('\\', from);
    } else {
      // Any other escape (\\ \" \n …): both characters as they are, so `\\x41` stays a backslash and "x41".
      i = line.indexOf('\\', i + 2);
    }
  }
  return changed ? out + line.slice(from) : undefined;
}

/** JSON.parse of a line with Apache's escapes decoded; undefined when it has none or is still not JSON. */
export function parseApacheEscaped(line: string): unknown {
  const decoded = decodeApacheEscapes(line);
  if (decoded === undefined) return undefined;
  try {
    return JSON.parse(decoded) as unknown;
  } catch {
    return undefined;
  }
}

/** The byte of the \xhh escape at i (a backslash), or -1 when there is none there. */
function hexByte(line: string, i: number): number {
  if (line.charCodeAt(i) !== BACKSLASH || line.charCodeAt(i + 1) !== X) return -1;
  const hi = hexDigit(line.charCodeAt(i + 2));
  const lo = hexDigit(line.charCodeAt(i + 3));
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

/** Text as the inside of a JSON string: controls, the quote and the backslash escaped, the rest as it is. */
function jsonText(text: string): string {
  let out = '';
  for (let k = 0; k < text.length; k++) {
    const c = text.charCodeAt(k);
    out += c < 0x20 || c === 0x22 || c === BACKSLASH ? `\\u${c.toString(16).padStart(4, '0')}` : text[k];
  }
  return out;
}
