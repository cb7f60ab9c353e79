// The prompt hash of a call, for repeated questions (docs/repeats.md): the prompt's text normalized the way
// the article asks ("normalize before you send": NFKC, full-/half-width punctuation folded, whitespace
// collapsed), hashed, so "退款政策？" and "退款政策?" count as one question. It goes on the call's log line
// (`prompt_hash`) and, when asked, on the request as a header a gateway can log. When two prompts differ
// only by such characters the client warns once: the API's prompt cache sees two prompts there. Only
// node:crypto, loaded at the first hash (lazy-builtins.ts): the client's import stays light.
import { nodeCrypto } from './lazy-builtins.js';

/** Characters NFKC leaves alone that are punctuation variants all the same: CJK full stop and comma, curly quotes, the wave dash. */
const FOLD: Readonly<Record<string, string>> = {
  '\u3002': '.',
  '\u3001': ',',
  '\u2018': "'",
  '\u2019': "'",
  '\u201C': '"',
  '\u201D': '"',
  '\u301C': '~',
};
const FOLDED = new RegExp(`[${Object.keys(FOLD).join('')}]`, 'gu');
/** Zero-width and soft-hyphen characters: invisible, so never the difference between two questions. */
const INVISIBLE = /[\u00AD\u200B-\u200D\u2060\uFEFF]/gu;
const WHITESPACE = /\s+/gu;

/** Bodies longer than this are not hashed (as fetch-args.ts does not parse them for their model). */
const MAX_BODY_CHARS = 1024 * 1024;
/** Hex digits kept of the SHA-256: 128 bits, far from any collision at the counts a top-k sees. */
const HASH_HEX_DIGITS = 32;
/** Normalized prompts remembered with their exact form, to notice variants; the oldest is let go past this. */
const TRACKED_PROMPTS = 4096;

/** The text as the hash sees it: NFKC, the punctuation of FOLD folded, invisible characters dropped, whitespace runs one space, trimmed. */
export function normalizePrompt(text: string): string {
  return text
    .normalize('NFKC')
    .replace(FOLDED, (c) => FOLD[c] as string)
    .replace(INVISIBLE, '')
    .replace(WHITESPACE, ' ')
    .trim();
}

/**
 * The prompt of a Messages request body (`system`, then each message's role and text), or of a legacy
 * Complete one (`prompt`), as [kind, value] parts: text to be normalized, or a non-text block (an image, a
 * tool result) as its JSON, taken as it is. Undefined when the body has no prompt.
 */
export function promptParts(body: unknown): [text: boolean, value: string][] | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const b = body as { system?: unknown; messages?: unknown; prompt?: unknown };
  const parts: [boolean, string][] = [];
  const content = (c: unknown) => {
    if (typeof c === 'string') parts.push([true, c]);
    else if (Array.isArray(c)) for (const block of c) parts.push(isTextBlock(block) ? [true, block.text] : [false, JSON.stringify(block) ?? '']);
  };
  if (b.system !== undefined) {
    parts.push([false, 'system']);
    content(b.system);
  }
  if (Array.isArray(b.messages)) {
    for (const m of b.messages as unknown[]) {
      const message = (m ?? {}) as { role?: unknown; content?: unknown };
      parts.push([false, String(message.role)]);
      content(message.content);
    }
  } else if (typeof b.prompt === 'string') parts.push([true, b.prompt]);
  return parts.some(([text]) => text) ? parts : undefined;
}

function isTextBlock(block: unknown): block is { type: 'text'; text: string } {
  const b = block as { type?: unknown; text?: unknown } | null;
  return b !== null && typeof b === 'object' && b.type === 'text' && typeof b.text === 'string';
}

export interface PromptHasherOptions {
  /** An HMAC key: the hash then cannot be matched against guessed prompts by whoever sees the logs or metrics. */
  key?: string | undefined;
  /** warnOnce (record-sink.ts): said once per key. */
  warn: (key: string, message: string) => void;
}

export class PromptHasher {
  /** Normalized prompt's hash → the exact prompt's hash first seen with it (insertion order = age). */
  private readonly seen = new Map<string, string>();
  /** Prompts seen that differ from an earlier one only by what normalizePrompt() folds. */
  variants = 0;

  constructor(private readonly opts: PromptHasherOptions) {}

  /** The hash of the JSON request body's prompt, or undefined (no body we can read, no prompt). */
  hashBody(body: RequestInit['body'] | undefined): string | undefined {
    let text: string | undefined;
    if (typeof body === 'string') text = body;
    else if (body instanceof Uint8Array && body.byteLength <= MAX_BODY_CHARS) text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
    if (text === undefined || text.length > MAX_BODY_CHARS) return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return undefined;
    }
    const parts = promptParts(parsed);
    return parts === undefined ? undefined : this.hashParts(parts);
  }

  /** The normalized hash of prompt parts, noting (and warning once about) a variant of an earlier prompt. */
  hashParts(parts: readonly [boolean, string][]): string {
    // NUL between parts: no text can make two different part lists read as one.
    const normalized = this.digest(parts.map(([text, v]) => (text ? normalizePrompt(v) : v)).join('\u0000'));
    const exact = nodeCrypto()
      .createHash('sha256')
      .update(parts.map(([, v]) => v).join('\u0000'))
      .digest('hex');
    const first = this.seen.get(normalized);
    if (first === undefined) {
      if (this.seen.size >= TRACKED_PROMPTS) this.seen.delete(this.seen.keys().next().value as string);
      this.seen.set(normalized, exact);
    } else if (first !== exact) {
      this.variants++;
      this.opts.warn(
        'prompt-variants',
        'zero-plane client: two prompts differ only by character width, Unicode form, invisible characters or whitespace (such as "？" and "?"). They count as one question in the repeats report, but the API caches them as two: normalize prompts before you send them (NFKC, fold punctuation, collapse whitespace).',
      );
    }
    return normalized;
  }

  private digest(text: string): string {
    const crypto = nodeCrypto();
    const h = this.opts.key === undefined ? crypto.createHash('sha256') : crypto.createHmac('sha256', this.opts.key);
    return h.update(text).digest('hex').slice(0, HASH_HEX_DIGITS);
  }
}
