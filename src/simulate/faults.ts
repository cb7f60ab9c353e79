// Runtime fault injection: what `/admin/faults` reads and writes. Every fault is neutral at 0, so
// "no faults" is the all-zero object and DELETE resets to it.
import { z } from 'zod';
import { describeIssues } from './profile.js';

export interface Faults {
  /** Multiplies fast-layer latency by (1 + ratio): 0.1 is +10 %. Negative values speed it up. */
  latencyDriftRatio: number;
  /** Share (0–1) of fast-layer answers whose delay profile says degraded=?1. */
  degradedRate: number;
  /** Subtracted from the profile's warm-up efficiency (0–1): 0.2 turns 0.917 into 0.717. */
  warmupEfficiencyDrop: number;
  /** Share (0–1) of opted-in requests that silently fall back to the standard layer. */
  hitRateDrop: number;
}

export const NO_FAULTS: Readonly<Faults> = Object.freeze({ latencyDriftRatio: 0, degradedRate: 0, warmupEfficiencyDrop: 0, hitRateDrop: 0 });

const share = z.number().min(0).max(1);

export const faultsSchema = z.strictObject({
  latencyDriftRatio: z.number().finite().min(-0.9).max(100),
  degradedRate: share,
  warmupEfficiencyDrop: share,
  hitRateDrop: share,
});

export class FaultValidationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FaultValidationError';
  }
}

/** Validates `input` (a JSON object with any subset of the fault fields) and lays it over `base`. */
export function parseFaults(input: unknown, base: Faults): { ok: true; faults: Faults } | { ok: false; error: string } {
  const parsed = faultsSchema.partial().safeParse(input);
  if (!parsed.success) return { ok: false, error: describeIssues(parsed.error) };
  const given = Object.fromEntries(Object.entries(parsed.data).filter(([, v]) => v !== undefined));
  return { ok: true, faults: { ...base, ...given } };
}

/** The live fault state of one simulator. Reads are copies; writes are validated. */
export class FaultController {
  private current: Faults;

  /** `onChange` hears every change after it is made (the demo mirrors faults across processes with it). */
  constructor(
    initial: Partial<Faults> = {},
    private readonly onChange?: (faults: Faults) => void,
  ) {
    this.current = this.validated(initial, NO_FAULTS);
  }

  get(): Faults {
    return { ...this.current };
  }

  /** Replaces the faults: the given fields, every omitted one back to 0. Throws FaultValidationError. */
  set(input: unknown): Faults {
    return this.changed(this.validated(input, NO_FAULTS));
  }

  /** Changes only the given fields. Throws FaultValidationError. */
  update(input: unknown): Faults {
    return this.changed(this.validated(input, this.current));
  }

  reset(): Faults {
    return this.changed({ ...NO_FAULTS });
  }

  private changed(faults: Faults): Faults {
    this.current = faults;
    this.onChange?.(this.get());
    return this.get();
  }

  private validated(input: unknown, base: Faults): Faults {
    const r = parseFaults(input, base);
    if (!r.ok) throw new FaultValidationError(r.error);
    return r.faults;
  }
}
