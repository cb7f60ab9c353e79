// The opt-in header as the caller is about to send it, judged by the exporter's own contract
// (signals/opt-in.ts): report it, repair it, or refuse to send the request. The one incident class this
// project exists for (an invisible character in the header, silently served by the slow layer) starts in
// the caller, so this is where it can be stopped on the first request instead of counted afterwards.
import { classifyOptIn, repairOptIn, type OptIn, type OptInDefect } from '../signals/opt-in.js';
import { readHeader, type FetchInput } from './fetch-args.js';

export type OptInAction = 'report' | 'repair' | 'reject';

/** What the guard decided for one call. */
export interface GuardVerdict {
  /** The value as the server will read it (UTF-8 bytes decoded), or undefined when the header is absent. */
  sent: string | undefined;
  optIn: OptIn;
  /** What was done about a malformed value: nothing to do (valid or missing), reported, repaired or rejected. */
  outcome: 'none' | 'reported' | 'repaired' | 'rejected';
}

/** Thrown (as fetch's rejection) by `optIn: 'reject'` before anything is sent. */
export class OptInHeaderError extends Error {
  constructor(
    readonly header: string,
    /** The value as the server would have read it. */
    readonly value: string,
    readonly defect: OptInDefect,
    readonly expected: string,
  ) {
    super(`${header}: ${[JSON.stringify(value), visible(value)].filter(Boolean).join(' ')} is malformed (${defect}); expected exactly ${JSON.stringify(expected)}. ` + 'The request was not sent.');
    this.name = 'OptInHeaderError';
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The text a server reads from a header value given to fetch. fetch strips leading and trailing HTTP
 * whitespace (space, tab, CR, LF) and sends every character as one byte (header values are byte strings,
 * Latin-1): a value read from bytes (a file, another program's environment) carries the UTF-8 bytes of
 * U+200B as three such characters, which the server decodes back to U+200B. A value that is not valid
 * UTF-8 that way (a lone U+00A0 or U+00AD) is read as it is.
 */
export function wireText(value: string): string {
  const text = value.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');
  if (!/^[\x00-\xff]*$/.test(text) || /^[\x00-\x7f]*$/.test(text)) return text;
  try {
    return UTF8.decode(Buffer.from(text, 'latin1'));
  } catch {
    return text;
  }
}

export class OptInGuard {
  private readonly name: string;

  constructor(
    private readonly header: { name: string; value: string },
    private readonly action: OptInAction,
  ) {
    this.name = header.name.toLowerCase();
  }

  get headerName(): string {
    return this.name;
  }

  /**
   * Judges the call's opt-in header. `repair` gives the replacement value to send (only when removing
   * invisible characters and trimming yields exactly the expected value). Throws OptInHeaderError for
   * `reject`; never for anything else.
   */
  judge(input: FetchInput, init: RequestInit | undefined): { verdict: GuardVerdict; replacement: string | undefined } {
    const raw = readHeader(input, init, this.name);
    const sent = raw === undefined ? undefined : wireText(raw);
    const optIn = classifyOptIn(sent, this.header.value);
    if (optIn.state !== 'malformed' || sent === undefined) return { verdict: { sent, optIn, outcome: 'none' }, replacement: undefined };
    const defect = optIn.defect as OptInDefect;
    if (this.action === 'reject') throw new OptInHeaderError(this.name, sent, defect, this.header.value);
    if (this.action === 'repair' && repairOptIn(sent) === this.header.value) {
      return { verdict: { sent: this.header.value, optIn, outcome: 'repaired' }, replacement: this.header.value };
    }
    return { verdict: { sent, optIn, outcome: 'reported' }, replacement: undefined };
  }
}

/** The code points a reader cannot see, spelled out: `(U+200B at 0)`; empty when there are none. */
function visible(value: string): string {
  const hidden: string[] = [];
  let i = 0;
  for (const ch of value) {
    if (!/^[\x21-\x7e]$/.test(ch)) hidden.push(`U+${(ch.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, '0')} at ${i}`);
    i++;
  }
  return hidden.length === 0 ? '' : `(${hidden.join(', ')})`;
}
