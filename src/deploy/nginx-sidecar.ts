// The gateway half of the Kubernetes sidecar example: nginx writing docs/gateways.md's `zero_plane` JSON
// access log into the volume the exporter reads, and the rotation that keeps that volume bounded. Every
// path is a volume of the Pod (the root filesystem is read-only), so the same files run unchanged on a
// plain host with those paths mapped (test/live/deploy/deploy-sidecar-live.test.ts does that).
import type { Config } from '../config/schema.js';

/** Where the Pod mounts what nginx and the exporter share or keep. */
export const SIDECAR_PATHS = {
  /** emptyDir shared by nginx (writes) and the exporter (reads). */
  logDir: '/var/log/zero-plane',
  /** nginx's pid file and temp files (emptyDir), also read by the rotator. */
  nginxRun: '/tmp/nginx',
  /** The nginx ConfigMap. */
  nginxConfigDir: '/etc/nginx/zero-plane',
  /** The exporter's ConfigMap. */
  exporterConfigDir: '/etc/zero-plane-exporter',
  /** emptyDir for the checkpoint: it lives as long as the Pod, and so does the log it points into. */
  stateDir: '/var/lib/zero-plane-exporter',
} as const;

export const SIDECAR_LOG = `${SIDECAR_PATHS.logDir}/llm.jsonl`;
export const GATEWAY_PORT = 8080;

/**
 * The nginx log_format of docs/gateways.md ("nginx (nginx-json)"), the one definition the Pod's nginx.conf uses:
 * test/unit/deploy/nginx-format-shared.test.ts fails when the two differ by a byte. Every variable is quoted, so
 * escape=json stays valid JSON; $upstream_response_time is the latency (the upstream's time, without the client's
 * upload or a slow reader), $request_time when nginx answered itself.
 */
export const NGINX_LOG_FORMAT = `log_format zero_plane escape=json
  '{"time_iso8601":"$time_iso8601","request_time":"$request_time",'
  '"upstream_response_time":"$upstream_response_time","status":"$status",'
  '"uri":"$uri","http_x_model":"$http_x_model","http_x_cohort":"$http_x_cohort",'
  '"upstream_http_x_anthropic_layer_id":"$upstream_http_x_anthropic_layer_id",'
  '"upstream_http_x_anthropic_delay_profile":"$upstream_http_x_anthropic_delay_profile",'
  '"upstream_http_x_anthropic_cached":"$upstream_http_x_anthropic_cached",'
  '"upstream_http_x_anthropic_downgrade_reason":"$upstream_http_x_anthropic_downgrade_reason",'
  '"http_x_anthropic_experimental":"$http_x_anthropic_experimental"}';`;

/** `text` with every line indented by `by` (the http block's level in nginx.conf). */
const indent = (text: string, by: string) => text.split('\n').map((line) => by + line).join('\n');

export function nginxConf(config: Config): string {
  const run = SIDECAR_PATHS.nginxRun;
  return `# nginx as the LLM gateway, writing the access log zero-plane-exporter reads (preset nginx-json).
# Runs as any non-root user on a read-only root filesystem: everything it writes is under ${run} and
# ${SIDECAR_PATHS.logDir} (volumes). Start: nginx -e stderr -c ${SIDECAR_PATHS.nginxConfigDir}/nginx.conf -g 'daemon off;'
worker_processes auto;
pid ${run}/nginx.pid;
error_log stderr warn;

events {
  worker_connections 1024;
}

http {
  client_body_temp_path ${run}/client_body;
  proxy_temp_path ${run}/proxy;
  fastcgi_temp_path ${run}/fastcgi;
  uwsgi_temp_path ${run}/uwsgi;
  scgi_temp_path ${run}/scgi;
  default_type application/octet-stream;

${indent(NGINX_LOG_FORMAT, '  ')}
  access_log ${SIDECAR_LOG} zero_plane;

  server {
    listen ${GATEWAY_PORT};

    location = /healthz {
      access_log off;
      return 200 "ok\\n";
    }

    location / {
      proxy_pass ${config.deploy.kubernetes.upstream};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      # LLM answers are long and may stream: no buffering, generous timeouts.
      proxy_buffering off;
      proxy_read_timeout 300s;
      proxy_send_timeout 300s;
    }
  }
}
`;
}

/**
 * The rotator container's script: past ROTATE_BYTES the log is renamed to .1 (replacing the previous one)
 * and nginx is told to reopen it (SIGUSR1, through the Pod's shared process namespace). The exporter
 * follows the rename: it drains the old file through the handle it holds, then reads the new one from 0.
 */
export const ROTATE_SCRIPT = `set -eu
log="\${ROTATE_LOG:-${SIDECAR_LOG}}"
pidfile="\${ROTATE_PIDFILE:-${SIDECAR_PATHS.nginxRun}/nginx.pid}"
while :; do
  sleep "\${ROTATE_CHECK_SECONDS:-30}"
  size=$(stat -c %s "$log" 2>/dev/null || echo 0)
  if [ "$size" -ge "$ROTATE_BYTES" ] && [ -s "$pidfile" ]; then
    mv -f "$log" "$log.1"
    kill -USR1 "$(cat "$pidfile")"
    echo "rotated $log at $size bytes"
  fi
done
`;
