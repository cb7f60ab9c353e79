// The exporter container's command: a shell that runs `serve` and, when it exits, starts it again in the
// same container. Kubernetes counts every container of a Pod in the Pod's readiness, and a container that is
// not running (between a crash and its restart, or in CrashLoopBackOff's back-off, up to five minutes) is not
// ready: the gateway Pod would leave its Service. Without a readiness probe the exporter container is ready
// for as long as it runs, and this loop keeps it running through any exit of `serve`; what remains is an OOM
// kill of the whole container (the memory limit's headroom keeps it away) and a liveness restart of a `serve`
// that stopped answering /-/healthy (generous, see deploy.kubernetes.probes).
// SIGTERM (the Pod stopping) goes on to `serve`, which writes its last checkpoint, and then the shell exits.

/** Run as `/bin/sh -c EXPORTER_SUPERVISOR zero-plane-exporter ARGS...`: $0 names the CLI, "$@" are serve's flags. */
export const EXPORTER_SUPERVISOR = `set -u
pid=
trap 'if [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null; wait "$pid"; fi; exit 0' TERM INT
while :; do
  "$0" serve "$@" &
  pid=$!
  code=0
  wait "$pid" || code=$?
  pid=
  echo "{\\"level\\":\\"error\\",\\"msg\\":\\"zero-plane-exporter serve exited; starting it again in this container (the gateway Pod stays ready)\\",\\"code\\":$code,\\"restartSeconds\\":\${RESTART_SECONDS:-2}}" >&2
  sleep "\${RESTART_SECONDS:-2}"
done
`;
