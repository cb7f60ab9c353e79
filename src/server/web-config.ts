// `--web.config.file`: TLS and basic auth in the format of the Prometheus exporter toolkit
// (https://github.com/prometheus/exporter-toolkit/blob/master/docs/web-configuration.md), so the file
// an SRE already wrote for node_exporter works here. Read once at start-up; every problem is a
// ConfigError naming the file, the line and the key (exit 2), as for the main config.
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createSecureContext, type SecureVersion } from 'node:tls';
import { z } from 'zod';
import { ConfigError, parseYamlWith, readConfigText } from '../config/load.js';

/** Go's tls.ClientAuthType names, as the toolkit spells them (`RequireClientCert` is its old alias). */
export const CLIENT_AUTH_TYPES = [
  'NoClientCert',
  'RequestClientCert',
  'RequireAnyClientCert',
  'RequireClientCert',
  'VerifyClientCertIfGiven',
  'RequireAndVerifyClientCert',
] as const;
export type ClientAuthType = (typeof CLIENT_AUTH_TYPES)[number];

const TLS_VERSIONS: Record<string, SecureVersion> = { TLS10: 'TLSv1', TLS11: 'TLSv1.1', TLS12: 'TLSv1.2', TLS13: 'TLSv1.3' };
const VERSION_ORDER = ['TLS10', 'TLS11', 'TLS12', 'TLS13'];
/** Go's tls.CurveID names → OpenSSL's. */
const CURVES: Record<string, string> = { CurveP256: 'P-256', CurveP384: 'P-384', CurveP521: 'P-521', X25519: 'X25519' };
/** Response headers the toolkit lets `http_server_config.headers` set. */
const HEADER_NAMES = ['Content-Security-Policy', 'X-Frame-Options', 'X-Content-Type-Options', 'X-XSS-Protection', 'Strict-Transport-Security'] as const;
/** A bcrypt hash as htpasswd -B (`$2y$`) and most libraries (`$2a$`, `$2b$`) write it. */
const BCRYPT_HASH = /^\$2[aby]\$(0[4-9]|[12][0-9]|3[01])\$[./A-Za-z0-9]{53}$/;

const unsupported = (what: string) => z.never({ error: `not supported by zero-plane-exporter: ${what}` }).optional();
const tlsVersion = z.enum(['TLS10', 'TLS11', 'TLS12', 'TLS13']);

const tlsServerSchema = z
  .object({
    cert_file: z.string().min(1).optional(),
    key_file: z.string().min(1).optional(),
    cert: z.string().min(1).optional(),
    key: z.string().min(1).optional(),
    client_auth_type: z.enum(CLIENT_AUTH_TYPES).default('NoClientCert'),
    client_ca_file: z.string().min(1).optional(),
    client_ca: z.string().min(1).optional(),
    client_allowed_sans: z.array(z.string().min(1)).optional(),
    min_version: tlsVersion.default('TLS12'),
    max_version: tlsVersion.default('TLS13'),
    cipher_suites: unsupported('OpenSSL\'s default cipher suites are used (remove the key)'),
    prefer_server_cipher_suites: z.boolean().default(true),
    curve_preferences: z.array(z.enum(Object.keys(CURVES) as [string, ...string[]])).optional(),
  })
  .strict()
  .superRefine((t, ctx) => {
    const problem = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    for (const [file, inline] of [['cert_file', 'cert'], ['key_file', 'key'], ['client_ca_file', 'client_ca']] as const) {
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
    if (VERSION_ORDER.indexOf(t.min_version) > VERSION_ORDER.indexOf(t.max_version)) problem('min_version', `${t.min_version} is above max_version ${t.max_version}`);
  });

const headersSchema = z
  .object(Object.fromEntries(HEADER_NAMES.map((h) => [h, z.string().optional()])) as Record<(typeof HEADER_NAMES)[number], z.ZodOptional<z.ZodString>>)
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

export const webConfigSchema = z
  .object({
    tls_server_config: tlsServerSchema.nullish(),
    http_server_config: z
      .object({
        /** Accepted for compatibility with files written for Go exporters; this server speaks HTTP/1.1. */
        http2: z.boolean().optional(),
        headers: headersSchema.nullish(),
      })
      .strict()
      .nullish(),
    basic_auth_users: z
      .record(z.string(), bcryptHash)
      .superRefine((users, ctx) => {
        for (const user of Object.keys(users)) {
          if (user === '' || user.includes(':')) ctx.addIssue({ code: 'custom', path: [user], message: 'a basic auth user name must be non-empty, without ":" (RFC 7617)' });
        }
      })
      .nullish(),
    rate_limit: unsupported('put a reverse proxy in front to rate-limit (remove the key)'),
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
  };
  clientAuth: ClientAuthType;
  /** A client certificate must carry one of these SANs (DNS, IP, e-mail or URI), exactly. */
  allowedSans?: readonly string[];
}

export interface WebConfig {
  file: string;
  tls?: TlsSettings;
  /** User → bcrypt hash; empty = no basic auth. */
  basicAuthUsers: ReadonlyMap<string, string>;
  /** Set on every response. */
  headers: Readonly<Record<string, string>>;
}

/** The web config in `file`. Throws ConfigError. */
export function loadWebConfig(file: string): WebConfig {
  return parseWebConfig(readConfigText(file), file);
}

type Problem = { line: number | undefined; key: string; message: string };

export function parseWebConfig(text: string, file: string): WebConfig {
  const parsed = parseYamlWith(webConfigSchema, text, file);
  const c = parsed.value;
  const problems: Problem[] = [];
  const problem = (path: string[], message: string) => problems.push({ line: parsed.lineOf(path), key: path.join('.'), message });

  let tls: TlsSettings | undefined;
  const t = c.tls_server_config;
  if (t != null) {
    // Relative paths are relative to the web config file, as in the exporter toolkit.
    const base = dirname(resolve(file));
    const material = (fileKey: 'cert_file' | 'key_file' | 'client_ca_file', inline: string | undefined): string | undefined => {
      const path = t[fileKey];
      if (path === undefined) return inline;
      try {
        return readFileSync(resolve(base, path), 'utf8');
      } catch (err) {
        problem(['tls_server_config', fileKey], `cannot read ${path}: ${(err as Error).message}`);
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
          minVersion: TLS_VERSIONS[t.min_version] as SecureVersion,
          maxVersion: TLS_VERSIONS[t.max_version] as SecureVersion,
          honorCipherOrder: t.prefer_server_cipher_suites,
          ...(t.curve_preferences === undefined ? {} : { ecdhCurve: t.curve_preferences.map((name) => CURVES[name]).join(':') }),
        },
        clientAuth: t.client_auth_type,
        ...(t.client_allowed_sans === undefined ? {} : { allowedSans: t.client_allowed_sans }),
      };
    }
  }
  if (problems.length > 0) throw new ConfigError(file, problems);

  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(c.http_server_config?.headers ?? {})) if (value !== undefined && value !== '') headers[name] = value;
  return { file, ...(tls === undefined ? {} : { tls }), basicAuthUsers: new Map(Object.entries(c.basic_auth_users ?? {})), headers };
}


/**
 * Why a client that completed the handshake may not go on, or undefined when it may: the checks Go's
 * crypto/tls makes for the client auth types OpenSSL has no mode for, and `client_allowed_sans`.
 */
export function clientCertificateProblem(
  tls: Pick<TlsSettings, 'clientAuth' | 'allowedSans'>,
  peer: { authorized: boolean; certificate: { subjectaltname?: string } | null },
): string | undefined {
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
