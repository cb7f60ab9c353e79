// How the pack's alert texts write a configured figure: enough digits to read as configured (0.185 s is
// "185 ms", not "185.00000000000003 ms"), and the unit after it. The mixin finds the figures by these
// same digits (mixin/render-mixin.ts), so both print through msDigits, pctDigits and pct4Digits.

/** Seconds as milliseconds, the digits only. */
export const msDigits = (seconds: number) => String(Number((seconds * 1000).toPrecision(10)));
/** A ratio as a percentage, the digits only. */
export const pctDigits = (ratio: number) => String(Number((ratio * 100).toPrecision(10)));
/** A computed ratio (an error-ratio limit) as a percentage to 4 digits: 93.33 %, not 93.33333333 %. */
export const pct4Digits = (ratio: number) => String(Number((ratio * 100).toPrecision(4)));

export const ms = (seconds: number) => `${msDigits(seconds)} ms`;
export const pct = (ratio: number) => `${pctDigits(ratio)} %`;
