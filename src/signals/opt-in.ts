// Classifies the request opt-in header. A malformed value says *why* it is malformed, because "a
// zero-width space pasted from a doc" and "someone typed the wrong value" need different fixes.

export type OptInState = 'valid' | 'missing' | 'malformed';
export type OptInDefect = 'invisible_char' | 'whitespace' | 'case' | 'value';
export const OPT_IN_DEFECTS: readonly OptInDefect[] = ['invisible_char', 'whitespace', 'case', 'value'];

export interface OptIn {
  state: OptInState;
  defect: OptInDefect | undefined;
}

/** Unicode format characters (Cf): U+200B–U+200F, U+2060–U+2064, U+FEFF, U+00AD, bidi controls, … */
const INVISIBLE = /\p{Cf}/gu;

const VALID: OptIn = { state: 'valid', defect: undefined };
const MISSING: OptIn = { state: 'missing', defect: undefined };
const MALFORMED: Record<OptInDefect, OptIn> = {
  invisible_char: { state: 'malformed', defect: 'invisible_char' },
  whitespace: { state: 'malformed', defect: 'whitespace' },
  case: { state: 'malformed', defect: 'case' },
  value: { state: 'malformed', defect: 'value' },
};

export function classifyOptIn(value: string | undefined, expected: string): OptIn {
  if (value === undefined) return MISSING;
  if (value === expected) return VALID;
  if (value.replace(INVISIBLE, '') === expected) return MALFORMED.invisible_char;
  if (value.trim() === expected) return MALFORMED.whitespace;
  if (value.toLowerCase() === expected.toLowerCase()) return MALFORMED.case;
  return MALFORMED.value;
}

/**
 * The value with invisible characters removed and surrounding whitespace trimmed: the only repairs that
 * cannot change what the sender meant. A case or value defect is left alone (that is a different value).
 */
export function repairOptIn(value: string): string {
  return value.replace(INVISIBLE, '').trim();
}
