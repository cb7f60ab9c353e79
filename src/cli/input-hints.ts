// What report, backtest and export say on stderr about inputs they do not read right. Its own module: each
// command is loaded on its own (main.ts), and this must not bring another command's code with it.
import type { HeadersHint, InputEvents, InputHint } from '../record/source-inputs.js';
import type { Logger } from '../server/logger.js';

/** What to do about an input whose first lines were mostly skipped, in words (serve logs it as `fix`). */
export function inputFix(h: InputHint): string {
  if (h.suggestion !== undefined) return `they look like ${h.suggestion}: set input.preset: ${h.suggestion}`;
  if (h.textFormat !== undefined) return `they are ${h.textFormat.name}${h.textFormat.wrapped === true ? ', read without unwrapping them' : ', not JSON'}: ${h.textFormat.fix}`;
  return 'see docs/input.md for the log formats read';
}

/** What to do about an input whose records carry no header where its preset looks (serve logs it as `fix`). */
export function headersFix(h: HeadersHint): string {
  if (h.fixes.length > 0) return `set ${h.fixes.join(', or ')}`;
  return h.advice ?? 'see docs/input.md#when-no-header-is-ever-found';
}

/** What the first lines of each input showed, as plain lines for stderr (the decision itself only at debug). */
export function inputHints(hint: (text: string) => void, log: Logger | undefined): InputEvents {
  return {
    decided: (source, preset, how, d) => {
      log?.debug('input preset', { source, preset, how, ...(d === undefined ? {} : { basis: d.basis, signature: d.signature.join(','), header: d.header, held: d.held }) });
      if (d?.basis === 'signature' || d?.basis === 'latency')
        hint(`zero-plane-exporter: ${source}: read as ${preset} by its structure alone: none of its first ${d.held} lines had a Zero-Plane header field; if that is wrong, set input.preset\n`);
      if (d?.basis === 'ambiguous')
        hint(
          `zero-plane-exporter: ${source}: ${(d.candidates ?? []).join(', ')} read its first ${d.held} lines alike and none had a Zero-Plane header field; read as ${preset}, a guess: set input.preset\n`,
        );
    },
    notUnderstood: (source, h) => {
      const reasons = h.reasons.map(([reason, n]) => `${reason} ${n}`).join(', ');
      const as = h.preset === undefined ? 'no preset reads them' : `read as ${h.preset}`;
      const fix = inputFix(h);
      hint(`zero-plane-exporter: ${source}: ${h.skipped} of the first ${h.lines} lines skipped (${reasons}); ${as}; ${fix}\n`);
    },
    labelUnresolved: (source, label, path, records) =>
      hint(`zero-plane-exporter: ${source}: label ${label}: its path ${path} held no value in the first ${records} records, so ${label} stays empty\n`),
    headersUnseen: (source, h) => {
      const found = h.found.length === 0 ? '' : `; found ${h.found.join(', ')}`;
      hint(
        `zero-plane-exporter: ${source}: no header found: none of the first ${h.records} records carried a wanted response header ` +
          `where ${h.preset} looks (${h.paths.join(', ')})${found}; ${headersFix(h)}\n`,
      );
    },
    headersSeen: (source, records, warned) => {
      if (warned) hint(`zero-plane-exporter: ${source}: a header was found after ${records} records without one\n`);
    },
  };
}
