// `--web.config.file`: TLS, HTTP/2, response headers, basic auth and rate limiting in the format of the
// Prometheus exporter toolkit (https://github.com/prometheus/exporter-toolkit/blob/master/docs/web-configuration.md),
// so the file an SRE already wrote for node_exporter works here: every key of the format is accepted and
// does what it does in Go, and where Node cannot do exactly that the key is refused, saying why. Read
// once at start-up; every problem is a ConfigError naming the file, the line and the key (exit 2), as
// for the main config.
import { X509Certificate } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { createSecureContext, type SecureVersion } from 'node:tls';
import { z } from 'zod';
import { parseGoDuration } from '../record/go-duration.js';
import { ConfigError, parseYamlWith, readConfigText } from '../config/load.js';
import { cappedArray, withinCap } from '../config/list-caps.js';
import { readRegularFile, RegularFileError } from '../config/regular-file.js';
import { bcryptCost } from './bcrypt-cost.js';

/** Go's tls.ClientAuthType names, as the toolkit spells them (`RequireClientCert` is its old alias). */
export const CLIENT_AUTH_TYPES = ['NoClientCert', 'RequestClientCert', 'RequireAnyClientCert', 'RequireClientCert', 'VerifyClientCertIfGiven', 'RequireAndVerifyClientCert'] as const;
export type ClientAuthType = (typeof CLIENT_AUTH_TYPES)[number];

const TLS_VERSIONS: Record<string, SecureVersion> = { TLS12: 'TLSv1.2', TLS13: 'TLSv1.3' };
const VERSION_ORDER = ['TLS10', 'TLS11', 'TLS12', 'TLS13'];
/** Versions Go offers that OpenSSL 3 refuses at its default security level: the handshake always fails. */
const UNUSABLE_VERSIONS = ['TLS10', 'TLS11'];
const UNUSABLE_VERSION =
  "Node.js 20's OpenSSL 3 cannot negotiate TLS 1.0 or 1.1 at its default security level (every such handshake fails), and lowering it would weaken every connection: use TLS12 or TLS13";
/** Go's tls.CurveID names → OpenSSL's (the names the toolkit accepts). */
const CURVES: Record<string, string> = { CurveP256: 'P-256', CurveP384: 'P-384', CurveP521: 'P-521', X25519: 'X25519' };
/**
 * The names the toolkit accepts (Go's tls.CipherSuites()) → OpenSSL's. As in Go, the list applies up to
 * TLS 1.2; TLS 1.3 suites are not configurable there, so their names are accepted and change nothing.
 */
export const CIPHER_SUITES: Readonly<Record<string, string | 'tls13'>> = {
  TLS_AES_128_GCM_SHA256: 'tls13',
  TLS_AES_256_GCM_SHA384: 'tls13',
  TLS_CHACHA20_POLY1305_SHA256: 'tls13',
  TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA: 'ECDHE-ECDSA-AES128-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA: 'ECDHE-ECDSA-AES256-SHA',
  TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA: 'ECDHE-RSA-AES128-SHA',
  TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA: 'ECDHE-RSA-AES256-SHA',
  TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256: 'ECDHE-ECDSA-AES128-GCM-SHA256',
  TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384: 'ECDHE-ECDSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256: 'ECDHE-RSA-AES128-GCM-SHA256',
  TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384: 'ECDHE-RSA-AES256-GCM-SHA384',
  TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-RSA-CHACHA20-POLY1305',
  TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256: 'ECDHE-ECDSA-CHACHA20-POLY1305',
};
/** RFC 7540 §9.2.2: an HTTP/2 server over TLS 1.2 must offer one of these; Go refuses a list without. */
const HTTP2_REQUIRED_CIPHERS = ['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256'];
/** Response headers the toolkit lets `http_server_config.headers` set. */
const HEADER_NAMES = ['Content-Security-Policy', 'X-Frame-Options', 'X-Content-Type-Options', 'X-XSS-Protection', 'Strict-Transport-Security'] as const;
/** A bcrypt hash as htpasswd -B (`$2y$`) and most libraries (`$2a$`, `$2b$`) write it. */
const BCRYPT_HASH = /^\$2[aby]\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}$/;

const tlsVersion = z.enum(['TLS10', 'TLS11', 'TLS12', 'TLS13']);
const cipherName = z.string().refine((name) => name in CIPHER_SUITES, {
  error: (issue) => `unknown cipher ${String(issue.input)}: one of Go's tls.CipherSuites() (${Object.keys(CIPHER_SUITES).join(', ')})`,
});

const tlsServerSchema = z
  .object({
    cert_file: z.string().min(1).optional(),
    key_file: z.string().min(1).optional(),
    cert: z.string().min(1).optional(),
    key: z.string().min(1).optional(),
    client_auth_type: z.enum(CLIENT_AUTH_TYPES).default('NoClientCert'),
    client_ca_file: z.string().min(1).optional(),
    client_ca: z.string().min(1).optional(),
    client_allowed_sans: cappedArray(z.string().min(1), 'tls_server_config.client_allowed_sans').optional(),
    min_version: tlsVersion.default('TLS12'),
    max_version: tlsVersion.default('TLS13'),
    cipher_suites: cappedArray(cipherName, 'tls_server_config.cipher_suites').nullish(),
    prefer_server_cipher_suites: z.boolean().default(true),
    curve_preferences: cappedArray(z.enum(Object.keys(CURVES) as [string, ...string[]]), 'tls_server_config.curve_preferences').nullish(),
  })
  .strict()
  .superRefine((t, ctx) => {
    const problem = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    for (const [file, inline] of [
      ['cert_file', 'cert'],
      ['key_file', 'key'],
      ['client_ca_file', 'client_ca'],
    ] as const) {
      if (t[file] !== undefined && t[inline] !== undefined) problem(inline, `give \`${file}\` or \`${inline}\`, not both`);
    }
    if (t.cert_file === undefined && t.cert === undefined) problem('cert_file', 'missing: TLS needs a certificate (`cert_file`, or `cert` inline)');
    if (t.key_file === undefined && t.key === undefined) problem('key_file', 'missing: TLS needs a private key (`key_file`, or `key` inline)');
    const hasCa = t.client_ca_file !== undefined || t.client_ca !== undefined;
    if (hasCa && t.client_auth_type === 'NoClientCert') {
      problem('client_auth_type', 'client_ca_file is set but client_auth_type is NoClientCert: set RequireAndVerifyClientCert to verify client certificates');
    }
    if (!hasCa && (t.client_auth_type === 'RequireAndVerifyClientCert' || t.client_auth_type === 'VerifyClientCertIfGiven')) {
      problem('client_ca_file', `missing: ${t.client_auth_type} verifies client certificates against this CA`);
    }
    if (t.client_allowed_sans !== undefined && !['RequireAnyClientCert', 'RequireClientCert', 'RequireAndVerifyClientCert'].includes(t.client_auth_type)) {
      problem('client_allowed_sans', 'needs client_auth_type RequireAndVerifyClientCert (or RequireAnyClientCert): other types let clients in without a certificate');
    }
    for (const key of ['min_version', 'max_version'] as const) if (UNUSABLE_VERSIONS.includes(t[key])) problem(key, `${t[key]} is refused: ${UNUSABLE_VERSION}`);
    if (VERSION_ORDER.indexOf(t.min_version) > VERSION_ORDER.indexOf(t.max_version)) problem('min_version', `${t.min_version} is above max_version ${t.max_version}`);
    if (t.cipher_suites != null && t.cipher_suites.length > 0 && t.max_version !== 'TLS13' && t.cipher_suites.every((c) => CIPHER_SUITES[c] === 'tls13')) {
      problem('cipher_suites', 'lists only TLS 1.3 suites, which are not configurable (as in Go), with max_version below TLS13: no TLS 1.2 suite would be left');
    }
  });

/**
 * An RFC 9110 field-value (5.5): visible characters and obs-text, with spaces and tabs only between them. A
 * CR or LF would otherwise be accepted here and make Node refuse to set the header on every response (500).
 */
const FIELD_VALUE = /^(?:[\x21-\x7e\x80-\xff](?:[\t \x21-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)?$/;
/** Longest header value set (a Content-Security-Policy is rarely above 2 KiB; proxies refuse 8 KiB headers). */
export const MAX_HEADER_VALUE_CHARS = 4096;
const headerValue = z
  .string()
  .max(MAX_HEADER_VALUE_CHARS)
  .refine((v) => FIELD_VALUE.test(v), {
    error: (issue) => {
      const v = String(issue.input);
      const bad = /[\r\n]/.test(v) ? 'a CR or LF' : /^[\t ]|[\t ]$/.test(v) ? 'leading or trailing whitespace' : 'a control character or one above U+00FF';
      return `not an HTTP field value (RFC 9110 5.5): it holds ${bad}`;
    },
  });

const headersSchema = z
  .object(Object.fromEntries(HEADER_NAMES.map((h) => [h, headerValue.optional()])) as Record<(typeof HEADER_NAMES)[number], z.ZodOptional<typeof headerValue>>)
  .strict()
  .superRefine((h, ctx) => {
    const frame = h['X-Frame-Options'];
    if (frame !== undefined && frame !== '' && !['deny', 'sameorigin'].includes(frame.toLowerCase())) {
      ctx.addIssue({ code: 'custom', path: ['X-Frame-Options'], message: 'must be deny or sameorigin' });
    }
    const sniff = h['X-Content-Type-Options'];
    if (sniff !== undefined && sniff !== '' && sniff.toLowerCase() !== 'nosniff') {
      ctx.addIssue({ code: 'custom', path: ['X-Content-Type-Options'], message: 'must be nosniff' });
    }
  });

const bcryptHash = z.string().regex(BCRYPT_HASH, 'not a bcrypt hash such as $2y$10$… (make one with `htpasswd -nBC 10 "" | tr -d \':\\n\'`)');

/** `interval` as Go's YAML reads a time.Duration: "1s", "250ms", or nanoseconds; 0 = no limit. */
const goDuration = z.union([z.string(), z.number()]).transform((value, ctx) => {
  const ns = parseGoDuration(value);
  if (ns === undefined) {
    ctx.addIssue({ code: 'custom', message: `${JSON.stringify(value)} is not a Go duration such as 1s, 250ms or 0` });
    return z.NEVER;
  }
  return ns;
});

export const webConfigSchema = z
  .object({
    tls_server_config: tlsServerSchema.nullish(),
    http_server_config: z
      .object({
        /** HTTP/2 over TLS (negotiated by ALPN; HTTP/1.1 clients are still served), as in Go: on unless false. */
        http2: z.boolean().default(true),
        headers: headersSchema.nullish(),
      })
      .strict()
      .nullish(),
    basic_auth_users: z
      .record(z.string(), bcryptHash)
      .refine(...withinCap('basic_auth_users'))
      .superRefine((users, ctx) => {
        for (const user of Object.keys(users)) {
          if (user === '' || user.includes(':')) ctx.addIssue({ code: 'custom', path: [user], message: 'a basic auth user name must be non-empty, without ":" (RFC 7617)' });
        }
      })
      .nullish(),
    /** A token bucket over every request, as golang.org/x/time/rate: `burst` tokens, one more per `interval`. */
    rate_limit: z
      .object({
        interval: goDuration.default(0),
        burst: z.number().int().min(0).default(0),
      })
      .strict()
      .nullish(),
  })
  .strict();

/** What node:https needs, plus the client-certificate checks OpenSSL leaves to the server. */
export interface TlsSettings {
  options: {
    cert: string;
    key: string;
    ca?: string;
    requestCert: boolean;
    rejectUnauthorized: boolean;
    minVersion: SecureVersion;
    maxVersion: SecureVersion;
    honorCipherOrder: boolean;
    ecdhCurve?: string;
    /** The TLS 1.2 suites (OpenSSL names); TLS 1.3 keeps its defaults. */
    ciphers?: string;
  };
  clientAuth: ClientAuthType;
  /** A client certificate must carry one of these SANs (DNS, IP, e-mail or URI), exactly. */
  allowedSans?: readonly string[];
}

export interface RateLimit {
  /** A token comes back every this many milliseconds. */
  intervalMs: number;
  /** Tokens the bucket holds (and starts with); 0 refuses every request, as in Go. */
  burst: number;
}

export interface WebConfig {
  file: string;
  tls?: TlsSettings;
  /** HTTP/2 offered by ALPN next to HTTP/1.1 (only over TLS, as in Go). */
  http2: boolean;
  /** User → bcrypt hash; empty = no basic auth. */
  basicAuthUsers: ReadonlyMap<string, string>;
  /** Set on every response. */
  headers: Readonly<Record<string, string>>;
  /** Undefined = no rate limit (`interval: 0`, or no `rate_limit`). */
  rateLimit?: RateLimit;
}

export interface WebConfigLimits {
  /** A `basic_auth_users` hash of a higher cost is refused (config `web.basicAuth.maxBcryptCost`). */
  maxBcryptCost: number;
}

const DEFAULT_LIMITS: WebConfigLimits = { maxBcryptCost: 14 };

/** The web config in `file`. Throws ConfigError. */
export function loadWebConfig(file: string, limits: WebConfigLimits = DEFAULT_LIMITS): WebConfig {
  return parseWebConfig(readConfigText(file), file, limits);
}

type Problem = { line: number | undefined; key: string; message: string };

export function parseWebConfig(text: string, file: string, limits: WebConfigLimits = DEFAULT_LIMITS): WebConfig {
  const parsed = parseYamlWith(webConfigSchema, text, file);
  const c = parsed.value;
  const problems: Problem[] = [];
  const problem = (path: string[], message: string) => problems.push({ line: parsed.lineOf(path), key: path.join('.'), message });

  for (const [user, hash] of Object.entries(c.basic_auth_users ?? {})) {
    const cost = bcryptCost(hash);
    if (cost > limits.maxBcryptCost) {
      problem(
        ['basic_auth_users', user],
        `bcrypt cost ${cost} is above web.basicAuth.maxBcryptCost (${limits.maxBcryptCost}): each check of this hash would take ` +
          `about ${Math.round((75 * 2 ** (cost - 10)) / 1000)} s of CPU (cost 10 is ~75 ms); rehash with a lower cost (htpasswd -nBC 10)`,
      );
    }
  }
  const http2 = c.http_server_config?.http2 ?? true;

  let tls: TlsSettings | undefined;
  const t = c.tls_server_config;
  if (t != null) {
    // Relative paths are relative to the web config file, as in the exporter toolkit.
    const base = dirname(resolve(file));
    const material = (fileKey: 'cert_file' | 'key_file' | 'client_ca_file', inline: string | undefined): string | undefined => {
      const path = t[fileKey];
      if (path == null) return inline ?? undefined;
      try {
        return readRegularFile(resolve(base, path));
      } catch (err) {
        if (!(err instanceof RegularFileError)) throw err;
        problem(['tls_server_config', fileKey], `${path}: ${err.message}`);
        return undefined;
      }
    };
    const cert = material('cert_file', t.cert);
    const key = material('key_file', t.key);
    const ca = material('client_ca_file', t.client_ca);
    const certKey = t.cert_file === undefined ? 'cert' : 'cert_file';
    const keyKey = t.key_file === undefined ? 'key' : 'key_file';
    const caKey = t.client_ca_file === undefined ? 'client_ca' : 'client_ca_file';
    if (cert !== undefined && key !== undefined) {
      const failed = (opts: { cert?: string; key?: string }) => {
        try {
          createSecureContext(opts);
          return undefined;
        } catch (err) {
          return (err as Error).message;
        }
      };
      const certProblem = failed({ cert });
      const keyProblem = failed({ key });
      if (certProblem !== undefined) problem(['tls_server_config', certKey], `not a PEM certificate: ${certProblem}`);
      if (keyProblem !== undefined) problem(['tls_server_config', keyKey], `not a PEM private key: ${keyProblem}`);
      if (certProblem === undefined && keyProblem === undefined) {
        const pairProblem = failed({ cert, key });
        if (pairProblem !== undefined) problem(['tls_server_config', keyKey], `does not belong to the certificate: ${pairProblem}`);
      }
    }
    if (ca !== undefined) {
      try {
        new X509Certificate(ca);
      } catch (err) {
        problem(['tls_server_config', caKey], `not a PEM certificate: ${(err as Error).message}`);
      }
    }
    const suites = (t.cipher_suites ?? []).map((name) => CIPHER_SUITES[name] as string).filter((name) => name !== 'tls13');
    const listed = t.cipher_suites ?? [];
    if (http2 && listed.length > 0 && t.min_version !== 'TLS13' && !HTTP2_REQUIRED_CIPHERS.some((name) => listed.includes(name))) {
      problem(
        ['tls_server_config', 'cipher_suites'],
        `HTTP/2 (http_server_config.http2, on by default) needs ${HTTP2_REQUIRED_CIPHERS.join(' or ')} in the list (RFC 7540 9.2.2; Go refuses it too): add one, or set http2: false`,
      );
    }
    if (cert !== undefined && key !== undefined) {
      const verify = t.client_auth_type === 'RequireAndVerifyClientCert';
      tls = {
        options: {
          cert,
          key,
          ...(ca === undefined ? {} : { ca }),
          requestCert: t.client_auth_type !== 'NoClientCert',
          // Only this type fails the handshake in OpenSSL; the others are checked once it is done.
          rejectUnauthorized: verify,
          // A list of TLS 1.3 names only leaves TLS 1.2 without a suite, as in Go: only TLS 1.3 can connect.
          minVersion: listed.length > 0 && suites.length === 0 ? 'TLSv1.3' : (TLS_VERSIONS[t.min_version] as SecureVersion),
          maxVersion: TLS_VERSIONS[t.max_version] as SecureVersion,
          honorCipherOrder: t.prefer_server_cipher_suites,
          ...(t.curve_preferences == null || t.curve_preferences.length === 0 ? {} : { ecdhCurve: t.curve_preferences.map((name) => CURVES[name]).join(':') }),
          ...(suites.length === 0 ? {} : { ciphers: suites.join(':') }),
        },
        clientAuth: t.client_auth_type,
        ...(t.client_allowed_sans === undefined ? {} : { allowedSans: t.client_allowed_sans }),
      };
    }
  }
  if (problems.length > 0) throw new ConfigError(file, problems);

  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(c.http_server_config?.headers ?? {})) if (value !== undefined && value !== '') headers[name] = value;
  const limit = c.rate_limit;
  const rateLimit = limit == null || limit.interval === 0 ? undefined : { intervalMs: limit.interval / 1e6, burst: limit.burst };
  return {
    file,
    ...(tls === undefined ? {} : { tls }),
    http2,
    basicAuthUsers: new Map(Object.entries(c.basic_auth_users ?? {})),
    headers,
    ...(rateLimit === undefined ? {} : { rateLimit }),
  };
}

/**
 * Why a client that completed the handshake may not go on, or undefined when it may: the checks Go's
 * crypto/tls makes for the client auth types OpenSSL has no mode for, and `client_allowed_sans`.
 */
export function clientCertificateProblem(tls: Pick<TlsSettings, 'clientAuth' | 'allowedSans'>, peer: { authorized: boolean; certificate: { subjectaltname?: string } | null }): string | undefined {
  const has = peer.certificate !== null && Object.keys(peer.certificate).length > 0;
  switch (tls.clientAuth) {
    case 'RequireAnyClientCert':
    case 'RequireClientCert':
      if (!has) return 'no client certificate';
      break;
    case 'VerifyClientCertIfGiven':
      if (has && !peer.authorized) return 'client certificate not signed by client_ca_file';
      break;
    case 'RequireAndVerifyClientCert':
      if (!has) return 'no client certificate';
      if (!peer.authorized) return 'client certificate not signed by client_ca_file';
      break;
    default:
      break;
  }
  if (tls.allowedSans !== undefined) {
    const sans = subjectAltNames(peer.certificate?.subjectaltname ?? '');
    if (!sans.some((san) => tls.allowedSans?.includes(san))) return `no SAN of the client certificate is in client_allowed_sans (it has ${sans.join(', ') || 'none'})`;
  }
  return undefined;
}

/** The values of node's `subjectaltname` ("DNS:a, IP Address:127.0.0.1, email:…, URI:…"); quoted ones are JSON strings. */
export function subjectAltNames(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|, )(DNS|IP Address|email|URI):("(?:[^"\\]|\\.)*"|[^,]*)/g)) {
    const raw = m[2] ?? '';
    out.push(raw.startsWith('"') ? (JSON.parse(raw) as string) : raw);
  }
  return out;
}
