// Test certificates made by openssl in a test's own directory: a self-signed server certificate for
// 127.0.0.1, a client CA and a client certificate it signed (SAN DNS:prometheus), and a rogue client
// certificate with the same SAN that nobody signed.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { requireBinary } from './binaries.js';

export function makeCertificates(dir: string): void {
  const openssl = (args: string[]) => execFileSync(requireBinary('openssl'), args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1', '-days', '1', '-keyout', 'server.key', '-out', 'server.crt']);
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=zero-plane test client CA', '-days', '1', '-keyout', 'ca.key', '-out', 'ca.crt']);
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=prometheus', '-keyout', 'client.key', '-out', 'client.csr']);
  writeFileSync(join(dir, 'client.ext'), 'subjectAltName=DNS:prometheus\nextendedKeyUsage=clientAuth\n');
  openssl(['x509', '-req', '-in', 'client.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '1', '-extfile', 'client.ext', '-out', 'client.crt']);
  // Same SAN, but signed by nobody the server trusts.
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=prometheus', '-addext', 'subjectAltName=DNS:prometheus', '-days', '1', '-keyout', 'rogue.key', '-out', 'rogue.crt']);
}
