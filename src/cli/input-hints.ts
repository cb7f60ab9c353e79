// What report, backtest and export say on stderr about inputs they do not read right. Its own module: each
// command is loaded on its own (main.ts), and this must not bring another command's code with it.
import type { InputEvents, InputHint } from '../record/source-inputs.js';
import type { Logger } from '../server/logger.js';

/** What to do about an input whose first lines were mostly skipped, in words (serve logs it as `fix`). */
export function inputFix(h: InputHint): string {
  if (h.suggestion !== undefined) return `they look like ${h.suggestion}: set input.preset: ${h.suggestion}`;
  if (h.textFormat !== undefined) return `they are ${h.textFormat.name}${h.textFormat.wrapped === true ? ', read without unwrapping them' : ', not JSON'}: ${h.textFormat.fix}`;
  return 'see "Input" in the README for the log formats read';
}

/** What the first lines of each input showed, as plain lines for stderr (the decision itself only at debug). */
export function inputHints(hint: (text: string) => void, log: Logger | undefined): InputEvents {
  return {
    decided: (source, preset, how) => log?.debug('input preset', { source, preset, how }),
    notUnderstood: (source, h) => {
      const reasons = h.reasons.map(([reason, n]) => `${reason} ${n}`).join(', ');
      const as = h.preset === undefined ? 'no preset reads them' : `read as ${h.preset}`;
      const fix = inputFix(h);
      hint(`zero-plane-exporter: ${source}: ${h.skipped} of the first ${h.lines} lines skipped (${reasons}); ${as}; ${fix}\n`);
    },
    labelUnresolved: (source, label, path, records) =>
      hint(`zero-plane-exporter: ${source}: label ${label}: its path ${path} held no value in the first ${records} records, so ${label} stays empty\n`),
  };
}
