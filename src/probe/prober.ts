// From a module name and a target to a result: which module, whether the target is one it may be sent to
// (its API key goes with the request), the key, the SDK, and the rate bound. Shared by /probe and the CLI.
import { normalTarget, type ProbeModule } from '../config/probe-schema.js';
import type { Config } from '../config/schema.js';
import { ProbeLimiter, type LimitedResult } from './probe-limiter.js';
import { readApiKey, sendProbe } from './probe-request.js';
import { loadSdk } from './sdk.js';

/** A module or target the request may not use: the caller's mistake (400, exit 2). */
export class ProbeParamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProbeParamError';
  }
}

export interface ResolvedProbe {
  name: string;
  module: ProbeModule;
  target: string;
}

export interface ProberOptions {
  /** The SDK's module specifier (tests of the missing-SDK error). */
  sdkSpecifier?: string;
  now?: () => number;
}

export class Prober {
  readonly limiter: ProbeLimiter;

  constructor(
    private readonly config: Config,
    private readonly opts: ProberOptions = {},
  ) {
    this.limiter = new ProbeLimiter({
      minIntervalMs: config.probe.minInterval,
      maxRequestsPerHour: config.probe.maxRequestsPerHour,
      ...(opts.now === undefined ? {} : { now: opts.now }),
    });
  }

  /** The module (by name; the only one when there is one and none is named) and the target (its baseURL when none is given). */
  resolve(moduleName: string | undefined, targetText: string | undefined): ResolvedProbe {
    const modules = this.config.probe.modules;
    const names = Object.keys(modules);
    const name = moduleName ?? (names.length === 1 ? names[0] : undefined);
    if (name === undefined) throw new ProbeParamError(`name a module: ${names.length === 0 ? 'probe.modules is empty' : `one of ${names.join(', ')}`}`);
    const module = Object.hasOwn(modules, name) ? modules[name] : undefined;
    if (module === undefined) throw new ProbeParamError(`unknown module "${name}": probe.modules has ${names.length === 0 ? 'none' : names.join(', ')}`);
    if (targetText === undefined || targetText === '') return { name, module, target: module.baseURL };
    const target = normalTarget(targetText);
    if (target === undefined) throw new ProbeParamError(`target "${targetText}" is not an http(s) base URL such as https://api.anthropic.com (no query, no fragment, no credentials)`);
    if (target !== module.baseURL && !module.allowedTargets.includes(target)) {
      throw new ProbeParamError(
        `target ${target} is not one module "${name}" may probe: its API key would be sent there. Add it to probe.modules.${name}.allowedTargets (allowed now: ${[module.baseURL, ...module.allowedTargets].join(', ')})`,
      );
    }
    return { name, module, target };
  }

  /** One probe, within the rate bound. Throws ProbeParamError, ProbeSetupError, SdkMissingError, ProbeBudgetExhausted. */
  async probe(p: ResolvedProbe): Promise<LimitedResult> {
    const apiKey = readApiKey(p.name, p.module);
    const sdk = await loadSdk(this.opts.sdkSpecifier);
    return this.limiter.run(`${p.name}\n${p.target}`, () => sendProbe({ config: this.config, name: p.name, module: p.module, target: p.target, apiKey, sdk }));
  }
}
