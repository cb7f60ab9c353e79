// `x-anthropic-delay-profile` is an RFC 8941 / RFC 9651 Dictionary ("warmup=hit, degraded=?0, mode=balanced").
// It is parsed with a real structured-fields parser; a value that does not parse is reported, never thrown.
import { parseDictionary, Token, type BareItem, type Dictionary } from 'structured-headers';

export type WarmupOutcome = 'hit' | 'miss' | undefined;
export type ThrottleMode = 'strict' | 'balanced' | 'adaptive' | undefined;

export interface DelayProfile {
  degraded: boolean;
  warmup: WarmupOutcome;
  mode: ThrottleMode;
}

export interface DelayProfileMembers {
  degradedMember: string;
  warmupMember: string;
  modeMember: string;
}

const MODES = new Set(['strict', 'balanced', 'adaptive']);
/** Gateways repeat a handful of profiles; caching parsed values keeps the parser off the per-line path. */
const CACHE_LIMIT = 256;

export class DelayProfileReader {
  private readonly cache = new Map<string, DelayProfile | null>();
  // The value of the previous line: most lines repeat it, and comparing it is cheaper than hashing it.
  private lastValue: string | undefined;
  private lastProfile: DelayProfile | null = null;

  constructor(private readonly members: DelayProfileMembers) {}

  /** The profile, or null when the value is not a valid structured-field Dictionary. */
  read(value: string): DelayProfile | null {
    if (value === this.lastValue) return this.lastProfile;
    const profile = this.lookup(value);
    this.lastValue = value;
    this.lastProfile = profile;
    return profile;
  }

  private lookup(value: string): DelayProfile | null {
    const cached = this.cache.get(value);
    if (cached !== undefined) return cached;
    const profile = this.parse(value);
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(value, profile);
    return profile;
  }

  private parse(value: string): DelayProfile | null {
    let dict: Dictionary;
    try {
      dict = parseDictionary(value);
    } catch {
      return null;
    }
    const degraded = bareItem(dict, this.members.degradedMember);
    const warmup = tokenText(bareItem(dict, this.members.warmupMember));
    const mode = tokenText(bareItem(dict, this.members.modeMember));
    return {
      degraded: degraded === true,
      warmup: warmup === 'hit' || warmup === 'miss' ? warmup : undefined,
      mode: mode !== undefined && MODES.has(mode) ? (mode as ThrottleMode) : undefined,
    };
  }
}

/** The member's bare item; inner lists and absent members give undefined. */
function bareItem(dict: Dictionary, key: string): BareItem | undefined {
  const member = dict.get(key);
  if (member === undefined || Array.isArray(member[0])) return undefined;
  return member[0] as BareItem;
}

function tokenText(item: BareItem | undefined): string | undefined {
  return item instanceof Token ? item.toString() : undefined;
}
