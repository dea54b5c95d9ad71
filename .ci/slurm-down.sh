#!/usr/bin/env bash
# Stop the single-node SLURM daemons started by .ci/slurm-up.sh, using their pid files. Idempotent.
#   .ci/slurm-down.sh                    # all: slurmd slurmctld slurmdbd mariadbd munged (in that order)
#   .ci/slurm-down.sh slurmd slurmctld   # only these, in the order given
# Running job steps (slurmstepd) are left alone, as SLURM does on a slurmd restart.
set -euo pipefail

[[ $(id -u) -eq 0 ]] || { echo "slurm-down.sh: must be run as root" >&2; exit 2; }

pidfile_of() {
  case $1 in
    slurmd) echo /run/slurmd.pid ;;
    slurmctld) echo /run/slurmctld.pid ;;
    slurmdbd) echo /run/slurmdbd.pid ;;
    mariadbd) echo /run/mysqld/mysqld.pid ;;
    munged) echo /run/munge/munged.pid ;;
    *) echo "slurm-down.sh: unknown daemon '$1'" >&2; exit 2 ;;
  esac
}

# Print the pid of daemon $1 if its pid file names a live process with that name.
live_pid() {
  local f pid
  f=$(pidfile_of "$1")
  [[ -r $f ]] || return 1
  read -r pid <"$f" || return 1
  [[ $pid =~ ^[0-9]+$ && $(cat "/proc/$pid/comm" 2>/dev/null) == "$1" ]] || return 1
  echo "$pid"
}

# signal DAEMON: send SIGTERM, remember its pid in $pending (or drop a stale pid file)
pending=()
signal() {
  local pid
  if pid=$(live_pid "$1"); then
    kill -TERM "$pid" 2>/dev/null || true
    pending+=("$1:$pid")
  else
    rm -f "$(pidfile_of "$1")"
  fi
}

# reap: wait for every pending daemon to exit (SIGKILL after 30 s)
reap() {
  local e d pid i
  for e in "${pending[@]}"; do
    d=${e%%:*} pid=${e##*:}
    for ((i = 0; i < 300; i++)); do
      [[ -d /proc/$pid ]] || break
      sleep 0.1
    done
    if [[ -d /proc/$pid ]]; then
      echo "slurm-down.sh: $d (pid $pid) ignored SIGTERM for 30 s, sending SIGKILL" >&2
      kill -KILL "$pid" 2>/dev/null || true
      while [[ -d /proc/$pid ]]; do sleep 0.1; done
    fi
    rm -f "$(pidfile_of "$d")"
    echo "slurm-down.sh: stopped $d (pid $pid)"
  done
  pending=()
}

daemons=("$@")
((${#daemons[@]})) || daemons=(slurmd slurmctld slurmdbd mariadbd munged)
for d in "${daemons[@]}"; do pidfile_of "$d" >/dev/null; done   # reject unknown names first
# slurmd and slurmctld each take ~2 s to exit, so stop them together; the rest one by one
# (slurmctld flushes to slurmdbd, slurmdbd to mariadbd, and all of them need munged).
for d in "${daemons[@]}"; do
  [[ $d == slurmd || $d == slurmctld ]] || reap
  signal "$d"
done
reap
