import { chunkStops } from './chunk-stops.js';
import { EnvelopeReader, type EnvelopeMode } from './envelope.js';
import type { LineSink, Stream } from './line-sink.js';

const LF = 0x0a;
const CR = 0x0d;
const NUL = 0x00;

/**
 * Cuts a byte stream into lines. It keeps raw bytes and hands over each completed
 * line whole (as bytes to a sink that reads them, else decoded), so a UTF-8
 * character split across chunks decodes correctly. A line that
 * crosses the limit is abandoned at once (bytes skipped up to the next `\n`),
 * so memory stays bounded by about maxLineBytes whatever the input.
 *
 * A run of NUL bytes where a line starts is skipped and reported (LineSink.nulBytes): truncating a file whose
 * writer does not append (Caddy, any copytruncate) leaves a hole that reads as NULs up to the writer's next
 * line, which is then read as usual. Only the first byte of a line is compared, so the cost is one per line.
 * With an envelope (input.envelope), each line is unwrapped (envelope.ts) before it is handed on.
 */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingLen = 0;
  /** Inside an oversize line that was already reported: skip until `\n`. */
  private isDiscarding = false;
  /** Dropped once `auto` finds a bare file: from then on a line costs what it costs without envelopes. */
  private envelope: EnvelopeReader | undefined;

  constructor(
    private readonly maxLineBytes: number,
    private readonly sink: LineSink,
    private readonly source: string,
    /** The stream its lines are (one file generation, one body); undefined: the source is one stream. */
    readonly stream?: Stream,
    envelope: EnvelopeMode = 'none',
  ) {
    this.envelope =
      envelope === 'none'
        ? undefined
        : new EnvelopeReader(envelope, maxLineBytes, {
            bytes: (buf, start, end) => this.deliver(buf, start, end),
            text: (text) => sink.line(text, source, this.stream),
            oversize: () => sink.oversize(source, this.stream),
            decided: (e) => {
              if (e === 'none') this.envelope = undefined;
              sink.envelope?.(source, e);
            },
          });
  }

  /** Bytes read but not handed on yet: a partial line, and lines an envelope holds as pieces of one. */
  get pendingBytes(): number {
    return this.pendingLen + (this.envelope?.heldBytes ?? 0);
  }

  /** Inside a line already reported as oversize: bytes up to the next `\n` are dropped. */
  get discarding(): boolean {
    return this.isDiscarding;
  }

  /**
   * Drops bytes up to and including the next `\n` without reporting them: resuming inside a line that was
   * already reported as oversize, or starting in the middle of one.
   */
  skipToNextLine(): void {
    this.reset();
    this.envelope?.reset();
    this.isDiscarding = true;
  }

  push(chunk: Buffer): void {
    // The chunk's bytes stay as they are while its lines are read: the byte scan may map it (chunk-stops.ts).
    const before = chunkStops.offer(chunk);
    try {
      let start = 0;
      while (start < chunk.length) {
        if (chunk[start] === NUL && this.pendingLen === 0 && !this.isDiscarding) {
          start = this.skipNuls(chunk, start);
          if (start === chunk.length) break;
        }
        const nl = chunk.indexOf(LF, start);
        if (nl === -1) {
          this.hold(chunk, start);
          break;
        }
        this.complete(chunk, start, nl);
        start = nl + 1;
      }
    } finally {
      chunkStops.withdraw(before);
    }
    this.sink.chunkEnd?.();
  }

  /** Emits a trailing unterminated line, if any. */
  flush(): void {
    if (!this.isDiscarding && this.pendingLen > 0) {
      const line = Buffer.concat(this.pending, this.pendingLen);
      this.emit(line, 0, contentEnd(line, 0, line.length), line.length);
    }
    this.reset();
    this.envelope?.flush();
    this.sink.chunkEnd?.();
  }

  /** Past the run of NULs at chunk[start]; reported to the sink. */
  private skipNuls(chunk: Buffer, start: number): number {
    let i = start + 1;
    while (i < chunk.length && chunk[i] === NUL) i++;
    this.sink.nulBytes?.(this.source, i - start);
    return i;
  }

  /** Keeps the unterminated tail of a chunk, or abandons the line if it is now too long. */
  private hold(chunk: Buffer, start: number): void {
    if (this.isDiscarding) return;
    const total = this.pendingLen + (chunk.length - start);
    // One byte of slack: a final `\r` may turn out to be half of a CRLF terminator.
    const fits = total <= this.maxLineBytes || (total === this.maxLineBytes + 1 && chunk[chunk.length - 1] === CR);
    if (!fits) {
      this.reset();
      this.isDiscarding = true;
      this.sink.oversize(this.source, this.stream);
      return;
    }
    // Copy: callers may reuse their read buffer.
    this.pending.push(Buffer.from(chunk.subarray(start)));
    this.pendingLen = total;
  }

  /** Handles the line ending at `end` (the `\n`), whose head may be pending. */
  private complete(chunk: Buffer, start: number, end: number): void {
    if (this.isDiscarding) {
      this.isDiscarding = false;
      return;
    }
    if (this.pendingLen === 0) {
      this.emitChecked(chunk, start, contentEnd(chunk, start, end), end + 1 - start);
      return;
    }
    this.pending.push(chunk.subarray(start, end));
    const line = Buffer.concat(this.pending, this.pendingLen + (end - start));
    this.reset();
    this.emitChecked(line, 0, contentEnd(line, 0, line.length), line.length + 1);
  }

  /** buf[start, end) is the line's content; `raw` its bytes in the file, terminator included. */
  private emitChecked(buf: Buffer, start: number, end: number, raw: number): void {
    if (end - start > this.maxLineBytes) {
      this.reset();
      this.sink.oversize(this.source, this.stream);
      return;
    }
    this.emit(buf, start, end, raw);
  }

  private emit(buf: Buffer, start: number, end: number, raw: number): void {
    if (this.envelope !== undefined) this.envelope.line(buf, start, end, raw);
    else this.deliver(buf, start, end);
  }

  private deliver(buf: Buffer, start: number, end: number): void {
    if (end <= start) return;
    if (this.sink.lineBytes !== undefined) this.sink.lineBytes(buf, start, end, this.source, this.stream);
    else this.sink.line(buf.toString('utf8', start, end), this.source, this.stream);
  }

  private reset(): void {
    this.pending = [];
    this.pendingLen = 0;
    this.isDiscarding = false;
  }
}

/** End of the line's content: a trailing `\r` (CRLF) is not content. */
function contentEnd(buf: Buffer, start: number, end: number): number {
  return end > start && buf[end - 1] === CR ? end - 1 : end;
}
