// What the first lines of each source showed about its format, logged once per source: by `serve` on the
// serving thread and in each parse worker.
import type { InputEvents } from '../record/source-inputs.js';
import type { Logger } from '../server/logger.js';
import { headersFix, inputFix } from './input-hints.js';

/** What the first lines of each source showed, logged once per source. */
export function inputLog(log: Logger): InputEvents {
  return {
    decided: (source, preset, how, d) => {
      const fields = {
        source,
        preset,
        how,
        ...(d === undefined
          ? {}
          : {
              basis: d.basis,
              ...(d.path === '' ? {} : { path: d.path }),
              signature: d.signature.join(','),
              ...(d.header === undefined ? {} : { header: d.header }),
              held: d.held,
              ...(d.previous === undefined ? {} : { previous: d.previous }),
              ...(d.candidates === undefined ? {} : { candidates: d.candidates.join(',') }),
            }),
      };
      if (d === undefined || d.basis === 'evidence' || d.basis === 'previous' || d.basis === 'configured' || d.basis === 'given') log.info('input format', fields);
      else if (d.basis === 'ambiguous')
        log.warn('input format ambiguous: several presets read the first lines alike and none showed a Zero-Plane header; read with a best guess, set input.preset', fields);
      else log.warn('input format decided without a Zero-Plane header in its first lines', { ...fields, fix: `if ${preset} is wrong, set input.preset` });
    },
    notUnderstood: (source, h) =>
      log.warn('input not understood: most of the first lines were skipped', {
        source,
        preset: h.preset ?? 'none',
        lines: h.lines,
        skipped: h.skipped,
        reasons: h.reasons.map(([reason, n]) => `${reason} ${n}`).join(', '),
        suggestion: h.suggestion,
        fix: h.suggestion === undefined ? inputFix(h) : `set input.preset: ${h.suggestion}`,
      }),
    labelUnresolved: (source, label, path, records) => log.warn('label path held no value in the first records; the label stays empty', { source, label, path, records }),
    headersUnseen: (source, h) =>
      log.warn('no header found: none of the first records carried a wanted response header where the preset keeps them', {
        source,
        preset: h.preset,
        records: h.records,
        paths: h.paths.join(','),
        found: h.found.length === 0 ? undefined : h.found.join(','),
        fix: headersFix(h),
      }),
    headersSeen: (source, records, warned) => {
      if (warned) log.info('header found after all', { source, records });
    },
  };
}
