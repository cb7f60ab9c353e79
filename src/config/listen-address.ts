// Prometheus-style listen addresses (--web.listen-address), in their own module so the CLI and the systemd unit
// generator check one without loading express. In config/: a value of a flag every room above may read.

/** Parses a Prometheus-style listen address (":9185", "127.0.0.1:0", "[::1]:9185"). */
export function parseListenAddress(address: string): { host: string | undefined; port: number } | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(address);
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port > 65535) return undefined;
  const host = m[1] ?? m[2];
  return { host: host === '' ? undefined : host, port };
}
