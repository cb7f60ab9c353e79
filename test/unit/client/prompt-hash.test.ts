// The client's prompt hash (client/prompt-hash.ts): what the normalization folds (full-/half-width
// punctuation such as ？ and ?, NFKC, CJK punctuation, invisible characters, whitespace) and what it keeps
// apart, that the hash is one the exporter reads (record/parse-record.ts promptHashOf), and the warning
// about prompts that differ only by folded characters: said once, with bounded memory.
import { describe, expect, it } from 'vitest';
import { normalizePrompt, PromptHasher, promptParts } from '../../../src/client/prompt-hash.js';
import { promptHashOf } from '../../../src/record/parse-record.js';

const body = (text: string, extra: Record<string, unknown> = {}) => JSON.stringify({ model: 'claude-x', max_tokens: 1, messages: [{ role: 'user', content: text }], ...extra });

function hasher(key?: string) {
  const warnings: string[] = [];
  const said = new Set<string>();
  const h = new PromptHasher({
    key,
    warn: (k, message) => {
      if (said.has(k)) return;
      said.add(k);
      warnings.push(message);
    },
  });
  return { h, warnings };
}

describe('normalizePrompt', () => {
  it.each([
    ['full-width question mark', '退款政策是什么？', '退款政策是什么?'],
    ['full-width letters, digits and punctuation (NFKC)', 'ＡＰＩ　ｋｅｙ　１２３！', 'API key 123!'],
    ['half-width katakana (NFKC)', 'ｶﾀｶﾅ', 'カタカナ'],
    ['composed and decomposed accents (NFKC)', 'caf\u0065\u0301', 'café'],
    ['CJK full stop and comma', '你好。我想退款、谢谢', '你好.我想退款,谢谢'],
    ['curly quotes', '\u201Crefund\u201D it\u2019s', '"refund" it\'s'],
    ['whitespace runs, tabs, newlines, ideographic space, ends', '  what\tis \n\n the\u3000refund   policy ', 'what is the refund policy'],
    ['invisible characters', 're\u200Bfund\uFEFF po\u00ADlicy', 'refund policy'],
  ])('%s', (_name, text, want) => {
    expect(normalizePrompt(text)).toBe(want);
  });

  it('keeps case and words apart: those are other questions', () => {
    expect(normalizePrompt('Refund?')).not.toBe(normalizePrompt('refund?'));
    expect(normalizePrompt('refund policy')).not.toBe(normalizePrompt('refundpolicy'));
  });
});

describe('PromptHasher', () => {
  it('gives one hash to prompts that differ only by folded characters, and one the exporter reads', () => {
    const { h } = hasher();
    const a = h.hashBody(body('What is the refund policy？'));
    const b = h.hashBody(body('  What is the  refund policy? '));
    expect(a).toBeDefined();
    expect(a).toBe(b);
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(promptHashOf(a)).toBe(a);
    expect(h.hashBody(body('What is the shipping policy?'))).not.toBe(a);
  });

  it('reads system, every message with its role, text blocks and the legacy prompt; no prompt, no hash', () => {
    const { h } = hasher();
    const user = h.hashBody(body('hi'));
    expect(h.hashBody(JSON.stringify({ messages: [{ role: 'assistant', content: 'hi' }] }))).not.toBe(user);
    expect(h.hashBody(body('hi', { system: 'be brief' }))).not.toBe(user);
    expect(h.hashBody(JSON.stringify({ messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] }))).toBe(user);
    // The model and max_tokens are not the question.
    expect(h.hashBody(body('hi', { model: 'claude-y', max_tokens: 99 }))).toBe(user);
    expect(h.hashBody(JSON.stringify({ prompt: '\n\nHuman: hi\n\nAssistant:' }))).toMatch(/^[0-9a-f]{32}$/);
    for (const none of [undefined, '', 'not json', '[]', '{"messages":[]}', JSON.stringify({ messages: [{ role: 'user', content: [{ type: 'image' }] }] })]) expect(h.hashBody(none)).toBeUndefined();
    expect(h.hashBody(new TextEncoder().encode(body('hi')))).toBe(user);
    expect(promptParts({ system: [{ type: 'text', text: 's' }], messages: [{ role: 'user', content: 'q' }] })).toEqual([
      [false, 'system'],
      [true, 's'],
      [false, 'user'],
      [true, 'q'],
    ]);
  });

  it('with a key, an HMAC: the same prompt hashes otherwise, and still the same for its variants', () => {
    const plain = hasher().h.hashBody(body('refund?'));
    const { h } = hasher('secret');
    const keyed = h.hashBody(body('refund?'));
    expect(keyed).not.toBe(plain);
    expect(h.hashBody(body('refund？'))).toBe(keyed);
    expect(hasher('other').h.hashBody(body('refund?'))).not.toBe(keyed);
  });

  it('warns once when two prompts differ only by folded characters, not for a prompt sent again as it was', () => {
    const { h, warnings } = hasher();
    h.hashBody(body('What is the refund policy?'));
    h.hashBody(body('What is the refund policy?'));
    expect(warnings).toEqual([]);
    h.hashBody(body('What is the refund policy？'));
    h.hashBody(body('What  is the refund policy?'));
    expect(h.variants).toBe(2);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/differ only by character width.*normalize prompts before you send/);
  });

  it('remembers a bounded number of prompts: the oldest are let go', () => {
    const { h } = hasher();
    h.hashBody(body('question 0?'));
    for (let i = 1; i <= 5000; i++) h.hashBody(body(`question ${i}?`));
    // The first was let go, so its variant is not noticed; the last is still remembered.
    h.hashBody(body('question 0？'));
    expect(h.variants).toBe(0);
    h.hashBody(body('question 5000？'));
    expect(h.variants).toBe(1);
  });
});
