// One nginx log_format: the one docs/gateways.md documents (and the real-gateway tests run) is the one the
// Pod's nginx.conf carries, byte for byte, upstream_response_time included; the committed config has it too.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../../src/config/schema.js';
import { NGINX_LOG_FORMAT, nginxConf } from '../../../src/deploy/nginx-sidecar.js';

const GATEWAYS = new URL('../../../docs/gateways.md', import.meta.url);
const COMMITTED = new URL('../../../deploy/kubernetes/config/nginx.conf', import.meta.url);

/** The log_format statement (from `log_format` to its closing `;`) in the first ```nginx block under the docs' nginx heading. */
function documentedFormat(markdown: string): string {
  const section = markdown.slice(markdown.indexOf('## nginx (`nginx-json`)'));
  const block = /```nginx\n([\s\S]*?)\n```/.exec(section)?.[1];
  if (block === undefined) throw new Error('docs/gateways.md: no ```nginx block under "## nginx (`nginx-json`)"');
  const statement = /^log_format zero_plane [\s\S]*?';$/m.exec(block)?.[0];
  if (statement === undefined) throw new Error(`docs/gateways.md: no log_format zero_plane statement in\n${block}`);
  return statement;
}

/** The same statement in an nginx.conf, its indentation (the http block's) taken off. */
function configuredFormat(conf: string): string {
  const statement = /^( *)log_format zero_plane [\s\S]*?';$/m.exec(conf);
  if (statement === null) throw new Error('nginx.conf has no log_format zero_plane');
  const indent = statement[1] as string;
  return statement[0].split('\n').map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line)).join('\n');
}

describe('the nginx log format is defined once', () => {
  it("docs/gateways.md's log_format is the generator's NGINX_LOG_FORMAT, byte for byte", () => {
    expect(documentedFormat(readFileSync(GATEWAYS, 'utf8'))).toBe(NGINX_LOG_FORMAT);
  });

  it('the generated and the committed nginx.conf carry it, with upstream_response_time', () => {
    expect(configuredFormat(nginxConf(defaultConfig()))).toBe(NGINX_LOG_FORMAT);
    expect(configuredFormat(readFileSync(COMMITTED, 'utf8'))).toBe(NGINX_LOG_FORMAT);
    expect(NGINX_LOG_FORMAT).toContain('"upstream_response_time":"$upstream_response_time"');
  });

  it('a format that differs by one field is caught (the check can fail)', () => {
    const without = NGINX_LOG_FORMAT.replace('"upstream_response_time":"$upstream_response_time",', '');
    const docs = readFileSync(GATEWAYS, 'utf8').replace(NGINX_LOG_FORMAT, without);
    expect(documentedFormat(docs)).not.toBe(NGINX_LOG_FORMAT);
    expect(configuredFormat(nginxConf(defaultConfig()).replace(NGINX_LOG_FORMAT.split('\n')[2] as string, "'\"status\":\"$status\","))).not.toBe(NGINX_LOG_FORMAT);
  });
});
