// Lines a container runtime or syslog wrapped around the gateway's own line, unwrapped before the record
// parser sees them: Kubernetes CRI (`TIME stdout F {…}`, what a DaemonSet reading /var/log/containers
// reads), Docker's json-file driver (`{"log":"{…}\n","stream":"stdout","time":"…"}`) and syslog (RFC 3164
// and 5424, with or without the `<PRI>` a file written by rsyslog leaves out). One EnvelopeReader per file
// (per LineSplitter): with `auto`, each file's first lines decide, so a rotation into another form is read
// right. CRI and syslog hand the inner bytes on in place; only Docker's escaped string is decoded. A line
// that does not have the file's envelope is handed on as it is, so the record parser counts it as usual.

/** input.envelope: `auto` decides per file from its first lines. */
export const ENVELOPE_MODES = ['auto', 'none', 'cri', 'docker', 'syslog'] as const;
export type EnvelopeMode = (typeof ENVELOPE_MODES)[number];
export type Envelope = Exclude<EnvelopeMode, 'auto'>;

/** Where unwrapped lines go: bytes in place (CRI, syslog, joined lines) or text (Docker's decoded string). */
export interface EnvelopeOutput {
  bytes(buf: Buffer, start: number, end: number): void;
  text(text: string): void;
  /** A joined line (CRI P…F, Docker's 16 KiB pieces) grew past the line limit: dropped, reported once. */
  oversize(): void;
  /** `auto` decided this file's envelope (`none` included). */
  decided?(envelope: Envelope): void;
}

/** Lines that are neither JSON nor any envelope, passed on as they are, before `auto` settles on `none`. */
const AUTO_MAX_UNDECIDED = 16;

const SP = 0x20;
const LBRACE = 0x7b;
const LT = 0x3c;
const GT = 0x3e;
const COLON = 0x3a;
const CR = 0x0d;

/** One stream's pieces of a line split by the runtime, not yet ended. */
interface Pieces {
  parts: Buffer[];
  bytes: number;
  /** Past the line limit: dropped up to the piece that ends the line. */
  dropping: boolean;
}

export class EnvelopeReader {
  private envelope: Envelope | undefined;
  private undecided = 0;
  /** Per stream (stdout, stderr): pieces of a line not ended yet. */
  private readonly pieces = new Map<string, Pieces>();
  /**
   * Raw bytes (terminators included) of the lines since the oldest piece still held, so a checkpoint goes
   * back to it. Lines of the other stream among them are then read twice after a restart: only when stdout
   * and stderr both split lines at the same time, which is rare enough to accept.
   */
  private held = 0;

  constructor(
    mode: EnvelopeMode,
    private readonly maxLineBytes: number,
    private readonly out: EnvelopeOutput,
  ) {
    this.envelope = mode === 'auto' ? undefined : mode;
  }

  /** The envelope in use, undefined while `auto` has not decided. */
  get current(): Envelope | undefined {
    return this.envelope;
  }

  /** Raw bytes of lines held as pieces of a line not ended yet (0 when none is). */
  get heldBytes(): number {
    return this.held;
  }

  /** One line buf[start, end) (no terminator, maybe empty), `raw` bytes of the file with its terminator. */
  line(buf: Buffer, start: number, end: number, raw: number): void {
    if (end > start) {
      const e = this.envelope ?? this.decide(buf, start, end);
      if (e === 'none' || e === undefined) this.out.bytes(buf, start, end);
      else if (e === 'cri') this.cri(buf, start, end);
      else if (e === 'docker') this.docker(buf, start, end);
      else this.syslog(buf, start, end);
    }
    // Every line from the oldest piece still held on is read again after a restart from a checkpoint.
    this.held = this.pieces.size === 0 ? 0 : this.held + raw;
  }

  /** The end of the file: pieces of a line that never ended are handed on as they are. */
  flush(): void {
    for (const p of this.pieces.values()) if (!p.dropping && p.bytes > 0) this.emitJoined(p, undefined);
    this.reset();
  }

  /** Forgets held pieces (reading goes on elsewhere in the file). */
  reset(): void {
    this.pieces.clear();
    this.held = 0;
  }

  private decide(buf: Buffer, start: number, end: number): Envelope | undefined {
    let e: Envelope | undefined;
    if (buf[start] === LBRACE) e = dockerLine(buf.toString('utf8', start, end)) === undefined ? 'none' : 'docker';
    else if (criContent(buf, start, end) >= 0) e = 'cri';
    else if (syslogContent(buf, start, end) >= 0) e = 'syslog';
    else if (++this.undecided >= AUTO_MAX_UNDECIDED) e = 'none';
    if (e !== undefined) {
      this.envelope = e;
      this.out.decided?.(e);
    }
    return e;
  }

  private cri(buf: Buffer, start: number, end: number): void {
    const at = criContent(buf, start, end);
    if (at < 0) {
      this.out.bytes(buf, start, end);
      return;
    }
    // criContent checked the layout: "TIME SP stdout|stderr SP TAG…", the tag's first letter P or F.
    const s1 = buf.indexOf(SP, start);
    const isPartial = buf[s1 + 8] === 0x50; // 'P'
    const stream = buf[s1 + 4] === 0x6f ? 'stdout' : 'stderr'; // std[o]ut
    this.piece(stream, buf, at, end, isPartial);
  }

  private docker(buf: Buffer, start: number, end: number): void {
    const d = buf[start] === LBRACE ? dockerLine(buf.toString('utf8', start, end)) : undefined;
    if (d === undefined) {
      this.out.bytes(buf, start, end);
      return;
    }
    // Docker ends a whole line with its `\n`; a line over 16 KiB comes in pieces, only the last one ended.
    const ended = d.log.endsWith('\n');
    const p = this.pieces.get(d.stream);
    if (ended && p === undefined) {
      const text = d.log.slice(0, d.log.length - (d.log.endsWith('\r\n') ? 2 : 1));
      // An empty line is no line, as in a bare file.
      if (text !== '') this.out.text(text);
      return;
    }
    // A CRLF line's `\r` is no content, as in a bare file (nor counted against the line limit).
    const bytes = Buffer.from(ended ? d.log.slice(0, d.log.endsWith('\r\n') ? -2 : -1) : d.log, 'utf8');
    this.piece(d.stream, bytes, 0, bytes.length, !ended);
  }

  private syslog(buf: Buffer, start: number, end: number): void {
    const at = syslogContent(buf, start, end);
    this.out.bytes(buf, at < 0 ? start : at, end);
  }

  /** A piece of a stream's line: held while `partial`, else the line it ends is handed on. */
  private piece(stream: string, buf: Buffer, start: number, end: number, partial: boolean): void {
    let p = this.pieces.get(stream);
    if (!partial && p === undefined) {
      this.out.bytes(buf, start, end);
      return;
    }
    if (p === undefined) this.pieces.set(stream, (p = { parts: [], bytes: 0, dropping: false }));
    if (!p.dropping) {
      p.bytes += end - start;
      if (p.bytes > this.maxLineBytes) {
        p.dropping = true;
        p.parts = [];
        this.out.oversize();
      } else if (partial) {
        // Copied: the splitter's buffer is reused for the next chunk.
        p.parts.push(Buffer.from(buf.subarray(start, end)));
      }
    }
    if (partial) return;
    this.pieces.delete(stream);
    if (!p.dropping) this.emitJoined(p, buf.subarray(start, end));
  }

  private emitJoined(p: Pieces, last: Buffer | undefined): void {
    if (last !== undefined) p.parts.push(last);
    const line = Buffer.concat(p.parts);
    const end = line.length > 0 && line[line.length - 1] === CR ? line.length - 1 : line.length;
    if (end > 0) this.out.bytes(line, 0, end);
  }
}

/**
 * Whether a file whose first bytes are `head`, read with `mode`, may hold lines cut into pieces (CRI,
 * Docker): such a file cannot be split at an arbitrary line start (report's two threads).
 */
export function mayJoinPieces(mode: EnvelopeMode, head: Buffer): boolean {
  if (mode === 'cri' || mode === 'docker') return true;
  if (mode !== 'auto') return false;
  // The first non-empty line decides in auto (a garbage first line: assume it may).
  let at = 0;
  while (at < head.length && (head[at] === 0x0a || head[at] === CR || head[at] === 0)) at++;
  const nl = head.indexOf(0x0a, at);
  const end = nl < 0 ? head.length : nl;
  if (criContent(head, at, end) >= 0) return true;
  if (head[at] === LBRACE) return dockerLine(head.toString('utf8', at, end)) !== undefined || nl < 0;
  return syslogContent(head, at, end) < 0;
}

/** A Docker json-file record's `log` and `stream`, or undefined when the line is not one. */
export function dockerLine(text: string): { log: string; stream: string } | undefined {
  if (!text.startsWith('{"log":')) return undefined;
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (obj === null || typeof obj !== 'object') return undefined;
  const { log, stream, time } = obj as Record<string, unknown>;
  // Docker writes only these two streams; any other is not its record (and pieces stay bounded per file).
  return typeof log === 'string' && (stream === 'stdout' || stream === 'stderr') && typeof time === 'string' ? { log, stream } : undefined;
}

const isDigit = (b: number | undefined): boolean => b !== undefined && b >= 0x30 && b <= 0x39;

/**
 * Where the content of a CRI line starts (`2026-12-02T10:00:00.123456789Z stdout F {…}`), or -1 when the
 * line is not one: an RFC 3339 time, `stdout` or `stderr`, a tag starting `P` (partial) or `F` (full).
 */
export function criContent(buf: Buffer, start: number, end: number): number {
  if (!rfc3339At(buf, start, end)) return -1;
  const s1 = buf.indexOf(SP, start);
  if (s1 < 0 || s1 >= end) return -1;
  const st = buf.toString('latin1', s1 + 1, Math.min(end, s1 + 8));
  if (st !== 'stdout ' && st !== 'stderr ') return -1;
  const tag = s1 + 8;
  const t = buf[tag];
  if (tag >= end || (t !== 0x46 && t !== 0x50)) return -1; // F, P
  const s3 = buf.indexOf(SP, tag);
  // A full line may be empty: "… stdout F" with nothing after the tag.
  if (s3 < 0 || s3 >= end) return t === 0x46 && !tagRest(buf, tag + 1, end) ? end : -1;
  return tagRest(buf, tag + 1, s3) ? -1 : s3 + 1;
}

/** Whether a CRI tag goes on past its first letter with anything but `:`-separated further tags. */
function tagRest(buf: Buffer, from: number, to: number): boolean {
  return from < to && buf[from] !== COLON;
}

/** An RFC 3339 time at `start` ("2026-12-02T10:00:00…"): its first 19 bytes are checked. */
function rfc3339At(buf: Buffer, start: number, end: number): boolean {
  if (end - start < 20) return false;
  for (const i of [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]) if (!isDigit(buf[start + i])) return false;
  return buf[start + 4] === 0x2d && buf[start + 7] === 0x2d && (buf[start + 10] === 0x54 || buf[start + 10] === 0x74) && buf[start + 13] === COLON && buf[start + 16] === COLON;
}

const MONTHS = new Set(['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']);

/**
 * Where the message of a syslog line starts, or -1 when it is not one. Accepted: `<PRI>` or none, then
 * RFC 5424 (`1 TIME HOST APP PROCID MSGID SD MSG`), or an RFC 3164 time (`Dec  2 10:00:00`) or an
 * RFC 3339 one (rsyslog's file format) followed by the host and tag (`gw nginx:`, `haproxy[12]:`): the
 * message starts after the tag's `: `.
 */
export function syslogContent(buf: Buffer, start: number, end: number): number {
  let at = start;
  if (buf[at] === LT) {
    let i = at + 1;
    while (i < end && i - at <= 4 && isDigit(buf[i])) i++;
    if (i === at + 1 || buf[i] !== GT) return -1;
    at = i + 1;
    // RFC 5424: a version, then six header fields, then the message.
    if (isDigit(buf[at]) && buf[at + 1] === SP) return rfc5424Message(buf, at + 2, end);
  }
  let afterTime: number;
  if (end - at >= 15 && MONTHS.has(buf.toString('latin1', at, at + 3)) && buf[at + 3] === SP) {
    // "Dec  2 10:00:00 " (the day padded with a space) or "Dec 02 10:00:00 ".
    const day = buf[at + 4];
    if (!(day === SP || isDigit(day)) || !isDigit(buf[at + 5]) || buf[at + 6] !== SP) return -1;
    for (const i of [7, 8, 10, 11, 13, 14]) if (!isDigit(buf[at + i])) return -1;
    if (buf[at + 9] !== COLON || buf[at + 12] !== COLON || buf[at + 15] !== SP) return -1;
    afterTime = at + 16;
  } else if (rfc3339At(buf, at, end)) {
    const sp = buf.indexOf(SP, at);
    if (sp < 0 || sp >= end) return -1;
    afterTime = sp + 1;
  } else {
    return -1;
  }
  // The tag ends at the first ": " (hostnames and tags hold no space); the message follows.
  const colon = buf.indexOf(': ', afterTime, 'latin1');
  if (colon < 0 || colon >= end) return -1;
  // At most a host and a tag before it: two tokens.
  const firstSpace = buf.indexOf(SP, afterTime);
  if (firstSpace < colon && buf.indexOf(SP, firstSpace + 1) < colon) return -1;
  return colon + 2;
}

/** The message of an RFC 5424 line after `VERSION SP`: TIME HOST APP PROCID MSGID, then SD (`-` or `[…]`…). */
function rfc5424Message(buf: Buffer, from: number, end: number): number {
  let at = from;
  for (let field = 0; field < 5; field++) {
    const sp = buf.indexOf(SP, at);
    if (sp < 0 || sp >= end || sp === at) return -1;
    at = sp + 1;
  }
  if (buf[at] === 0x2d) {
    at++;
  } else {
    // One or more SD-ELEMENTs; `\]` inside a value does not close one.
    while (buf[at] === 0x5b) {
      let i = at + 1;
      for (; i < end; i++) {
        if (buf[i] === 0x5c) i++;
        else if (buf[i] === 0x5d) break;
      }
      if (i >= end) return -1;
      at = i + 1;
    }
    if (at === from) return -1;
  }
  if (at >= end) return end;
  if (buf[at] !== SP) return -1;
  at++;
  // A UTF-8 BOM may start the message.
  if (buf[at] === 0xef && buf[at + 1] === 0xbb && buf[at + 2] === 0xbf) at += 3;
  return at;
}
