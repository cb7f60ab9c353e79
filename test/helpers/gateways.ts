// Real gateways (Debian's nginx, Caddy, HAProxy and Apache httpd) started on 127.0.0.1 as reverse proxies in front of an
// upstream, each logging with the block docs/gateways.md shows for it: the block is read from that page here, so
// the documentation and the test cannot drift apart. Each gateway also answers one path itself
// (LOCAL_ANSWER_PATH, a 429), as a rate limit would. Processes are stopped by their own pid.
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { requireBinary } from './binaries.js';
import { accepts, freePort, startDaemon, type Daemon, type DaemonOptions } from './processes.js';

export const GATEWAYS_DOC = fileURLToPath(new URL('../../docs/gateways.md', import.meta.url));
/** Answered by the gateway itself with a 429, never sent upstream. */
export const LOCAL_ANSWER_PATH = '/v1/local-answer';

/** The first fenced block of language `lang` after the heading of docs/gateways.md that starts with `heading`. */
export function documentedBlock(heading: string, lang: string): string {
  const text = readFileSync(GATEWAYS_DOC, 'utf8');
  const at = text.split('\n').findIndex((line) => line.startsWith(heading));
  if (at < 0) throw new Error(`docs/gateways.md has no heading "${heading}"`);
  const rest = text.split('\n').slice(at + 1);
  const open = rest.findIndex((line) => line === `\`\`\`${lang}`);
  const nextHeading = rest.findIndex((line) => /^#{1,3} /.test(line));
  if (open < 0 || (nextHeading >= 0 && nextHeading < open)) throw new Error(`docs/gateways.md: no \`\`\`${lang} block under "${heading}"`);
  const close = rest.findIndex((line, i) => i > open && line === '```');
  return rest.slice(open + 1, close).join('\n');
}

/** `block` with the documented example log path replaced by `logPath`; throws when the path is not in it. */
function withLogPath(block: string, documentedPath: string, logPath: string): string {
  if (!block.includes(documentedPath)) throw new Error(`the documented block does not write to ${documentedPath}:\n${block}`);
  return block.replaceAll(documentedPath, logPath);
}

export interface Gateway {
  name: 'nginx' | 'caddy' | 'haproxy';
  /** http://127.0.0.1:PORT */
  url: string;
  /** The gateway's access log, as its documented block writes it. */
  logPath: string;
  /** What the gateway printed (stderr, and stdout where it is not the log). */
  output(): string;
  stop(): Promise<void>;
}

/** Spawns `bin` and resolves once `port` accepts connections (a bare connect: no request, so nothing is logged). */
function startListening(bin: string, args: string[], port: number, opts: DaemonOptions = {}): Promise<Daemon> {
  return startDaemon(bin, args, () => accepts(port), 15_000, opts);
}

export interface Nginx extends Gateway {
  /** `nginx -s reopen`: the master reopens its logs (after the log was renamed away). */
  reopen(): void;
}

/**
 * nginx with the documented log_format and access_log in its http block (or `logBlock`, the lines a user had
 * before, writing to /var/log/nginx/llm.jsonl); prefix, pid and temp paths under `dir`.
 */
export async function startNginx(dir: string, upstream: string, logBlock = documentedBlock('## nginx', 'nginx')): Promise<Nginx> {
  const bin = requireBinary('nginx');
  const port = await freePort();
  const logPath = join(dir, 'llm.jsonl');
  for (const t of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, `tmp-${t}`), { recursive: true });
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    [
      // Workers would run as nobody and could not write the temp paths of a private test directory.
      process.getuid?.() === 0 ? 'user root;' : '',
      'worker_processes 1;',
      `pid ${join(dir, 'nginx.pid')};`,
      `error_log ${join(dir, 'error.log')} notice;`,
      'events { worker_connections 64; }',
      'http {',
      ...['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t === 'body' ? 'client_body' : t}_temp_path ${join(dir, `tmp-${t}`)};`),
      withLogPath(logBlock, '/var/log/nginx/llm.jsonl', logPath),
      '  server {',
      `    listen 127.0.0.1:${port};`,
      `    location = ${LOCAL_ANSWER_PATH} { return 429; }`,
      `    location / { proxy_pass http://${upstream}; }`,
      '  }',
      '}',
    ].join('\n'),
  );
  const args = ['-p', dir, '-c', conf];
  const started = await startListening(bin, [...args, '-g', 'daemon off;'], port);
  return {
    name: 'nginx',
    url: `http://127.0.0.1:${port}`,
    logPath,
    output: () => `${started.output()}${safeRead(join(dir, 'error.log'))}`,
    stop: () => started.stop(),
    reopen() {
      const r = spawnSync(bin, [...args, '-s', 'reopen'], { encoding: 'utf8', timeout: 10_000 });
      if (r.status !== 0) throw new Error(`nginx -s reopen failed: ${r.stderr}`);
    },
  };
}

/** Caddy with the documented `log` block in its site block; admin off, its data and config under `dir`. */
export async function startCaddy(dir: string, upstream: string): Promise<Gateway> {
  const bin = requireBinary('caddy');
  const port = await freePort();
  const logPath = join(dir, 'llm.jsonl');
  const caddyfile = join(dir, 'Caddyfile');
  writeFileSync(
    caddyfile,
    [
      '{',
      '\tadmin off',
      '}',
      `http://127.0.0.1:${port} {`,
      '\tbind 127.0.0.1',
      withLogPath(documentedBlock('## Caddy', 'caddyfile'), '/var/log/caddy/llm.jsonl', logPath),
      `\trespond ${LOCAL_ANSWER_PATH} 429`,
      `\treverse_proxy ${upstream}`,
      '}',
      '',
    ].join('\n'),
  );
  const env = { ...process.env, HOME: dir, XDG_DATA_HOME: join(dir, 'data'), XDG_CONFIG_HOME: join(dir, 'config') };
  const started = await startListening(bin, ['run', '--config', caddyfile, '--adapter', 'caddyfile'], port, { env });
  return { name: 'caddy', url: `http://127.0.0.1:${port}`, logPath, output: started.output, stop: started.stop };
}

/** HAProxy with the documented frontend lines (or `logBlock`'s); its standard output (the log) appended to the log file. */
export async function startHaproxy(dir: string, upstream: string, logBlock = documentedBlock('## HAProxy', 'haproxy')): Promise<Gateway> {
  const bin = requireBinary('haproxy');
  const port = await freePort();
  const logPath = join(dir, 'llm.jsonl');
  const cfg = join(dir, 'haproxy.cfg');
  const lines = logBlock.split('\n');
  writeFileSync(
    cfg,
    [
      'defaults',
      '  mode http',
      '  timeout connect 5s',
      '  timeout client 30s',
      '  timeout server 30s',
      'frontend llm',
      `  bind 127.0.0.1:${port}`,
      ...lines.map((l) => `  ${l}`),
      `  http-request return status 429 if { path ${LOCAL_ANSWER_PATH} }`,
      '  default_backend upstream',
      'backend upstream',
      `  server s1 ${upstream}`,
      '',
    ].join('\n'),
  );
  const check = spawnSync(bin, ['-c', '-f', cfg], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`haproxy -c rejected the documented lines:\n${check.stdout}${check.stderr}`);
  const fd = openSync(logPath, 'a');
  try {
    const started = await startListening(bin, ['-f', cfg, '-db'], port, { stdout: fd });
    return { name: 'haproxy', url: `http://127.0.0.1:${port}`, logPath, output: started.output, stop: started.stop };
  } finally {
    closeSync(fd); // the child has its own copy
  }
}

export interface Apache extends Omit<Gateway, 'name'> {
  name: 'apache';
  /** `apachectl graceful`: SIGUSR1 to the parent, which reopens its logs (after the log was renamed away). */
  graceful(): void;
}

/** apache2 from PATH, or from /usr/sbin (where Debian puts it, and a non-root PATH may not look). */
function apacheBinary(): string {
  try {
    return requireBinary('apache2');
  } catch (err) {
    if (existsSync('/usr/sbin/apache2')) return '/usr/sbin/apache2';
    throw err;
  }
}

/**
 * Apache httpd (mpm_event, mod_proxy + mod_proxy_http) in the foreground with the documented LogFormat and
 * CustomLog lines; ServerRoot, pid, runtime dir and error log under `dir`. The gateway answers
 * LOCAL_ANSWER_PATH itself with a 429 (mod_alias), and proxies the rest.
 */
export async function startApache(dir: string, upstream: string): Promise<Apache> {
  const bin = apacheBinary();
  const port = await freePort();
  const logPath = join(dir, 'llm.jsonl');
  const modules = '/usr/lib/apache2/modules';
  const conf = join(dir, 'httpd.conf');
  const root = process.getuid?.() === 0;
  writeFileSync(
    conf,
    [
      `ServerRoot ${dir}`,
      'ServerName 127.0.0.1',
      `Listen 127.0.0.1:${port}`,
      `PidFile ${join(dir, 'httpd.pid')}`,
      `DefaultRuntimeDir ${dir}`,
      `ErrorLog ${join(dir, 'error.log')}`,
      ...['mpm_event', 'authz_core', 'alias', 'proxy', 'proxy_http'].map((m) => `LoadModule ${m}_module ${modules}/mod_${m}.so`),
      // Started as root, the children would run as uid -1 and say so: give them the usual unprivileged user.
      ...(root ? ['User nobody', 'Group nogroup'] : []),
      'StartServers 1',
      'ServerLimit 1',
      'ThreadsPerChild 8',
      'MaxRequestWorkers 8',
      withLogPath(documentedBlock('## Apache httpd', 'apache'), '/var/log/apache2/llm.jsonl', logPath),
      `Redirect 429 ${LOCAL_ANSWER_PATH}`,
      `ProxyPass ${LOCAL_ANSWER_PATH} !`,
      `ProxyPass / http://${upstream}/`,
      '',
    ].join('\n'),
  );
  const check = spawnSync(bin, ['-f', conf, '-t'], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`apache2 -t rejected the documented lines:\n${check.stdout}${check.stderr}`);
  const started = await startListening(bin, ['-f', conf, '-DFOREGROUND'], port);
  return {
    name: 'apache',
    url: `http://127.0.0.1:${port}`,
    logPath,
    output: () => `${started.output()}${safeRead(join(dir, 'error.log'))}`,
    stop: () => started.stop(),
    graceful() {
      if (started.child.pid === undefined || !started.child.kill('SIGUSR1')) throw new Error(`apache2 graceful: no process to signal\n${started.output()}`);
    },
  };
}

function safeRead(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
