// How the pack's alert texts write a configured figure: enough digits to read as configured (0.185 s is
// "185 ms", not "185.00000000000003 ms"), and the unit after it.

export const ms = (seconds: number) => `${Number((seconds * 1000).toPrecision(10))} ms`;
export const pct = (ratio: number) => `${Number((ratio * 100).toPrecision(10))} %`;
