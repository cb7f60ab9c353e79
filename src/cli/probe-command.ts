// `probe`: one probe, for a person or a CI step. The exit code is the verdict (flags.ts USAGE.probe):
// 0 served by Zero-Plane, 3 answered otherwise, 1 no answer, 2 a module or target it may not use.
import type { Config } from '../config/schema.js';
import { ProbeSetupError } from '../probe/probe-request.js';
import { probeJson, probeText } from '../probe/probe-text.js';
import { ProbeParamError, Prober } from '../probe/prober.js';
import { SdkMissingError } from '../probe/sdk.js';
import { UsageError } from './flags.js';

export interface ProbeArgs {
  module: string | undefined;
  targets: string[];
  format: string;
}

/** The exit code when the probe got an answer that was not a success (docs/contract.md §8: 3 is "the condition held"). */
export const PROBE_FAILED = 3;

export async function runProbe(config: Config, args: ProbeArgs, out: (text: string) => void, err: (text: string) => void): Promise<number> {
  if (args.format !== 'text' && args.format !== 'json') throw new UsageError('--format must be text or json');
  if (args.targets.length > 1) throw new UsageError(`probe takes at most one TARGET, got ${args.targets.join(' ')}`);
  const prober = new Prober(config);
  let limited;
  try {
    limited = await prober.probe(prober.resolve(args.module, args.targets[0]));
  } catch (e) {
    if (e instanceof ProbeParamError || e instanceof ProbeSetupError) throw new UsageError(e.message);
    if (e instanceof SdkMissingError) {
      err(`zero-plane-exporter: ${e.message}\n`);
      return 1;
    }
    throw e;
  }
  out(args.format === 'json' ? probeJson(limited) : probeText(limited));
  const r = limited.result;
  // Warnings go to stderr too with JSON, so a CI log shows them without parsing the object.
  if (args.format === 'json') for (const w of r.warnings) err(`zero-plane-exporter: warning: ${w}\n`);
  if (r.success) return 0;
  return r.httpStatus === null ? 1 : PROBE_FAILED;
}
