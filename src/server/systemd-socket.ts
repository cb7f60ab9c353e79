// `--web.systemd-socket`: listen on the sockets systemd passed (socket activation, sd_listen_fds(3)), as
// the exporter toolkit does through go-systemd's activation.Listeners(): descriptors 3, 4, … as many as
// LISTEN_FDS says, only when LISTEN_PID is this process.

/** The first descriptor systemd passes (SD_LISTEN_FDS_START). */
export const LISTEN_FDS_START = 3;

export class SystemdSocketError extends Error {}

/**
 * The descriptors systemd passed to this process. The variables are removed afterwards, as go-systemd
 * and sd_listen_fds(unset_environment=1) do, so a child process does not take them for its own.
 * Throws SystemdSocketError when there are none for this process.
 */
export function systemdListenFds(env: NodeJS.ProcessEnv = process.env, pid: number = process.pid): number[] {
  const pidText = env.LISTEN_PID;
  const countText = env.LISTEN_FDS;
  delete env.LISTEN_PID;
  delete env.LISTEN_FDS;
  delete env.LISTEN_FDNAMES;
  if (countText === undefined || pidText === undefined) {
    throw new SystemdSocketError('--web.systemd-socket: no sockets from systemd (LISTEN_FDS and LISTEN_PID are not set): start it from a .socket unit, or use --web.listen-address');
  }
  if (!/^\d+$/.test(pidText) || Number(pidText) !== pid) {
    throw new SystemdSocketError(`--web.systemd-socket: the sockets are for process ${pidText}, not this one (${pid}): is a wrapper between systemd and the exporter? ExecStart must run it directly`);
  }
  const count = /^\d+$/.test(countText) ? Number(countText) : 0;
  if (count < 1) throw new SystemdSocketError(`--web.systemd-socket: LISTEN_FDS is "${countText}": no socket activation file descriptors found`);
  return Array.from({ length: count }, (_, i) => LISTEN_FDS_START + i);
}
