#!/usr/bin/env bash
# Stand up a real one-node SLURM cluster on this (Debian, root, no systemd) machine for CI.
# Recipe and pitfalls: /work/shared/docs/slurm-ci.md. Idempotent: a re-run with everything up
# changes nothing; a changed config is rewritten and the SLURM daemons restarted.
# Stop everything with .ci/slurm-down.sh. Logs: /var/log/slurm.
#
# Knobs (environment):
#   SLURM_ACCOUNTING  slurmdbd (default, mode A: slurmdbd + MariaDB, sacct works) | none (mode B)
#   SLURM_FAKE_GPUS   typed fake GPUs, "type:count,..." (default a100:2,v100:2); "N" = N untyped; "" = none
#   SLURM_CPUS        CPUs the node advertises (default 16)
#   SLURM_MEM_MB      RealMemory the node advertises, MB (default 128000)
#                     (above the real machine => SlurmdParameters=config_overrides; jobs oversubscribe)
#   SLURM_CI_ACCOUNT  mode A only: create this account and add root (and $SUDO_USER) to it
#   SLURM_UP_TIMEOUT  seconds each wait loop may take (default 60)
set -euo pipefail

if [[ $(id -u) -ne 0 ]]; then
  echo "slurm-up.sh: must be run as root (try: sudo $0)" >&2
  exit 2
fi

T0=$EPOCHREALTIME
HERE=$(cd "$(dirname "$0")" && pwd)
ACCOUNTING=${SLURM_ACCOUNTING:-slurmdbd}
FAKE_GPUS=${SLURM_FAKE_GPUS-a100:2,v100:2}
CPUS=${SLURM_CPUS:-16}
MEM_MB=${SLURM_MEM_MB:-128000}
CI_ACCOUNT=${SLURM_CI_ACCOUNT:-}
TIMEOUT=${SLURM_UP_TIMEOUT:-60}
H=$(hostname -s)
LOG=/var/log/slurm
GPUDIR=/var/lib/slurm-fakegpu
ETC=/etc/slurm
DONE=()   # what this run did, for the summary

die() { echo "slurm-up.sh: $*" >&2; exit 1; }

case $ACCOUNTING in
  slurmdbd | dbd | "") ACCOUNTING=slurmdbd ;;
  none) ;;
  *) echo "slurm-up.sh: SLURM_ACCOUNTING must be 'slurmdbd' or 'none', not '$ACCOUNTING'" >&2; exit 2 ;;
esac
[[ $CPUS =~ ^[1-9][0-9]*$ && $MEM_MB =~ ^[1-9][0-9]*$ && $TIMEOUT =~ ^[1-9][0-9]*$ ]] ||
  { echo "slurm-up.sh: SLURM_CPUS, SLURM_MEM_MB and SLURM_UP_TIMEOUT must be positive integers" >&2; exit 2; }

# ---------------------------------------------------------------- helpers

pidfile_of() {
  case $1 in
    slurmd | slurmctld | slurmdbd) echo "/run/$1.pid" ;;
    mariadbd) echo /run/mysqld/mysqld.pid ;;
    munged) echo /run/munge/munged.pid ;;
  esac
}
# running DAEMON: its pid file names a live process of that name
running() {
  local f pid
  f=$(pidfile_of "$1")
  [[ -r $f ]] && read -r pid <"$f" && [[ $pid =~ ^[0-9]+$ ]] || return 1
  [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$1" ]]
}

# wait_until DESC LOGFILE DAEMON CMD...: poll CMD (quietly) until it succeeds. Fails after
# $TIMEOUT s, or after 3 s if DAEMON (may be "") has died, showing the tail of LOGFILE.
wait_until() {
  local desc=$1 log=$2 daemon=$3 start=$SECONDS
  shift 3
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS - start >= TIMEOUT)) || { [[ -n $daemon ]] && ((SECONDS - start >= 3)) && ! running "$daemon"; }; then
      echo "slurm-up.sh: gave up after $((SECONDS - start)) s waiting for $desc" >&2
      [[ -n $daemon ]] && ! running "$daemon" && echo "slurm-up.sh: $daemon is not running" >&2
      [[ -r $log ]] && { echo "--- tail of $log:" >&2; tail -n 25 "$log" >&2; }
      exit 1
    fi
    sleep 0.05
  done
}

# write_if_changed FILE CONTENT [MODE [OWNER]]: returns 0 if it wrote the file
write_if_changed() {
  local f=$1 content=$2 mode=${3:-644} owner=${4:-root:root}
  if [[ -f $f ]] && [[ $(<"$f") == "$content" ]]; then
    return 1
  fi
  install -m "$mode" -o "${owner%%:*}" -g "${owner##*:}" /dev/null "$f.new"
  printf '%s\n' "$content" >"$f.new"
  mv -f "$f.new" "$f"
  DONE+=("wrote $f")
}

# ---------------------------------------------------------------- packages

pkgs=(slurm-wlm munge)
[[ $ACCOUNTING == slurmdbd ]] && pkgs+=(slurmdbd mariadb-server)
missing=()
for p in "${pkgs[@]}"; do
  [[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) == installed ]] || missing+=("$p")
done
if ((${#missing[@]})); then
  apt_install() { DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"; }
  if ! out=$(apt_install 2>&1); then
    # only missing/outdated package lists are worth an apt-get update
    grep -Eq 'Unable to locate package|has no installation candidate|404 +Not Found|Failed to fetch' <<<"$out" ||
      { echo "$out" >&2; die "apt-get install ${missing[*]} failed"; }
    out=$(apt-get update -q 2>&1) || { echo "$out" >&2; die "apt-get update failed"; }
    out=$(apt_install 2>&1) || { echo "$out" >&2; die "apt-get install ${missing[*]} failed after apt-get update"; }
  fi
  DONE+=("installed ${missing[*]}")
fi

# ---------------------------------------------------------------- host name, directories

getent hosts "$H" >/dev/null || { echo "127.0.0.1 $H" >>/etc/hosts; DONE+=("added $H to /etc/hosts"); }
for d in /var/spool/slurmctld /var/spool/slurmd "$LOG" "$GPUDIR" "$ETC"; do [[ -d $d ]] || mkdir -p "$d"; done
for d in /var/spool/slurmctld "$LOG"; do   # must belong to SlurmUser
  [[ $(stat -c %U "$d") == slurm ]] || chown slurm:slurm "$d"
done

# ---------------------------------------------------------------- fake GPUs -> gres.conf lines

node_gres=() gres_lines=() tres=() gpu_types=() untyped=0 idx=0 new_dev=0
IFS=, read -ra specs <<<"$FAKE_GPUS"
for s in "${specs[@]}"; do
  s=${s// /}
  [[ -n $s ]] || continue
  if [[ $s =~ ^([A-Za-z0-9_.-]+):([0-9]+)$ ]]; then
    type=${BASH_REMATCH[1]} n=${BASH_REMATCH[2]}
  elif [[ $s =~ ^[0-9]+$ ]]; then
    type="" n=$s untyped=1
  else
    echo "slurm-up.sh: bad SLURM_FAKE_GPUS entry '$s' (want type:count or count)" >&2; exit 2
  fi
  ((n > 0)) || continue
  last=$((idx + n - 1))
  files="$GPUDIR/nvidia$idx"
  ((n > 1)) && files="$GPUDIR/nvidia[$idx-$last]"
  for ((i = idx; i <= last; i++)); do
    dev=$GPUDIR/nvidia$i
    [[ -c $dev ]] && continue
    # character device like /dev/null; plain file only if mknod is not permitted (then no CUDA_VISIBLE_DEVICES)
    if mknod "$dev.new" c 1 3 2>/dev/null; then
      mv -f "$dev.new" "$dev"
      new_dev=1   # slurmd only looks at the devices when it starts
    elif [[ ! -e $dev ]]; then
      touch "$dev"
      echo "slurm-up.sh: warning: mknod not permitted, $dev is a plain file" >&2
    fi
  done
  if [[ -n $type ]]; then
    node_gres+=("gpu:$type:$n") tres+=("gres/gpu:$type") gpu_types+=("$type")
    gres_lines+=("NodeName=$H Name=gpu Type=$type File=$files Flags=nvidia_gpu_env")
  else
    node_gres+=("gpu:$n")
    gres_lines+=("NodeName=$H Name=gpu File=$files Flags=nvidia_gpu_env")
  fi
  idx=$((last + 1))
done
((untyped == 0 || ${#gpu_types[@]} == 0)) || { echo "slurm-up.sh: SLURM_FAKE_GPUS mixes typed and untyped GPUs" >&2; exit 2; }
NGPUS=$idx

# ---------------------------------------------------------------- configuration files

# Advertise more than the machine has only through config_overrides (else slurmd drains the node).
real_cpus=$(nproc)
real_mem=$(($(awk '/^MemTotal:/ {print $2}' /proc/meminfo) / 1024))
overrides=""
((CPUS <= real_cpus && MEM_MB <= real_mem)) || overrides="SlurmdParameters=config_overrides"

if [[ $ACCOUNTING == slurmdbd ]]; then
  acct="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStorageTRES=$(IFS=,; echo "gres/gpu${tres[*]:+,${tres[*]}}")
AccountingStoreFlags=job_comment
JobAcctGatherType=jobacct_gather/linux"
else
  acct="AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none"
fi

slurm_conf="# Written by .ci/slurm-up.sh (SLURM_ACCOUNTING=$ACCOUNTING); edits are overwritten.
ClusterName=ci
SlurmctldHost=$H
SlurmUser=slurm
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
DefMemPerCPU=500
MinJobAge=300
ReturnToService=2
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=$LOG/slurmctld.log
SlurmdLogFile=$LOG/slurmd.log
JobCompType=jobcomp/none
$acct
GresTypes=gpu
${overrides:+$overrides
}NodeName=$H CPUs=$CPUS RealMemory=$MEM_MB${node_gres[*]:+ Gres=$(IFS=,; echo "${node_gres[*]}")} State=UNKNOWN
PartitionName=cpu  Nodes=ALL Default=YES MaxTime=INFINITE State=UP
PartitionName=a100 Nodes=ALL MaxTime=INFINITE State=UP
PartitionName=v100 Nodes=ALL MaxTime=INFINITE State=UP"

gres_conf="# Written by .ci/slurm-up.sh: fake GPUs ($FAKE_GPUS), character devices like /dev/null.
$(printf '%s\n' "${gres_lines[@]}")"

slurmdbd_conf="AuthType=auth/munge
DbdHost=localhost
DbdPort=6819
SlurmUser=slurm
PidFile=/run/slurmdbd.pid
LogFile=$LOG/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=slurmpw
StorageLoc=slurm_acct_db"

restart=()   # daemons to restart for a changed config (scontrol reconfigure cannot switch accounting)
write_if_changed "$ETC/slurm.conf" "$slurm_conf" && restart=(slurmd slurmctld)
write_if_changed "$ETC/gres.conf" "$gres_conf" && restart=(slurmd slurmctld)
if [[ $ACCOUNTING == slurmdbd ]]; then
  write_if_changed "$ETC/slurmdbd.conf" "$slurmdbd_conf" 600 slurm:slurm && restart+=(slurmdbd)
fi
((new_dev)) && [[ " ${restart[*]} " != *" slurmd "* ]] && restart=(slurmd "${restart[@]}")
for d in "${restart[@]}"; do
  if running "$d"; then
    "$HERE/slurm-down.sh" "${restart[@]}" >/dev/null
    DONE+=("stopped ${restart[*]} for the new config")
    break
  fi
done
# Mode B needs no database.
if [[ $ACCOUNTING == none ]] && { running slurmdbd || running mariadbd; }; then
  "$HERE/slurm-down.sh" slurmdbd mariadbd >/dev/null
  DONE+=("stopped slurmdbd+mariadbd")
fi

# ---------------------------------------------------------------- munge

if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then   # reuse a working munged (e.g. apt-started)
  [[ -s /etc/munge/munge.key ]] || mungekey --create --keyfile=/etc/munge/munge.key
  mkdir -p /run/munge
  chown munge:munge /run/munge /etc/munge /etc/munge/munge.key
  chmod 700 /etc/munge
  chmod 400 /etc/munge/munge.key
  "$HERE/slurm-down.sh" munged >/dev/null   # a munged that does not answer
  runuser -u munge -- /usr/sbin/munged --force
  wait_until "munged" /var/log/munge/munged.log munged sh -c 'munge -n | unmunge'
  DONE+=("started munged")
fi

# ---------------------------------------------------------------- MariaDB + slurmdbd (mode A)

if [[ $ACCOUNTING == slurmdbd ]]; then
  if ! mysqladmin ping >/dev/null 2>&1; then
    mkdir -p /run/mysqld
    chown mysql:mysql /run/mysqld
    # the Debian postinst normally initialises the data directory
    [[ -d /var/lib/mysql/mysql ]] || mariadb-install-db --user=mysql >"$LOG/mariadb-install.log" 2>&1
    "$HERE/slurm-down.sh" mariadbd >/dev/null
    setsid -f /usr/sbin/mariadbd --user=mysql --pid-file=/run/mysqld/mysqld.pid \
      --socket=/run/mysqld/mysqld.sock --bind-address=127.0.0.1 \
      --innodb-buffer-pool-size=128M --innodb-lock-wait-timeout=900 >>"$LOG/mariadb.log" 2>&1
    wait_until "mariadbd" "$LOG/mariadb.log" "" mysqladmin ping
    DONE+=("started mariadbd")
  fi
  if ! running slurmdbd; then
    mysql -e "CREATE DATABASE IF NOT EXISTS slurm_acct_db;
      CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurmpw';
      GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';"
    /usr/sbin/slurmdbd
    wait_until "slurmdbd" "$LOG/slurmdbd.log" slurmdbd sacctmgr -n show cluster
    DONE+=("started slurmdbd")
  fi
fi

# ---------------------------------------------------------------- slurmctld + slurmd

if ! running slurmctld; then
  /usr/sbin/slurmctld
  wait_until "slurmctld" "$LOG/slurmctld.log" slurmctld sh -c 'scontrol ping | grep -q UP'
  DONE+=("started slurmctld")
fi
if ! running slurmd; then
  /usr/sbin/slurmd
  DONE+=("started slurmd")
fi

# The node must be usable: resume it if it is DRAIN/DOWN/INVAL (stale state, old config).
node_ready() {
  local st
  st=$(scontrol -o show node "$H" 2>/dev/null | grep -o 'State=[^ ]*') || return 1
  case $st in
    *DRAIN* | *DOWN* | *FAIL* | *INVAL*)
      if running slurmd && [[ $st != *NOT_RESPONDING* ]]; then
        scontrol update nodename="$H" state=resume 2>/dev/null && DONE+=("resumed $H ($st)")
      fi
      return 1 ;;
    *NOT_RESPONDING* | *UNKNOWN* | *FUTURE* | *POWER*) return 1 ;;
    State=IDLE* | State=MIXED* | State=ALLOCATED* | State=COMPLETING*) return 0 ;;
  esac
  return 1
}
# not via wait_until: node_ready updates DONE, so it must run in this shell
start=$SECONDS
until node_ready; do
  if ((SECONDS - start >= TIMEOUT)) || ! running slurmd; then
    echo "slurm-up.sh: node $H did not become ready in $((SECONDS - start)) s" >&2
    scontrol show node "$H" >&2 || true
    for f in "$LOG/slurmd.log" "$LOG/slurmctld.log"; do echo "--- tail of $f:" >&2; tail -n 15 "$f" >&2; done
    exit 1
  fi
  sleep 0.1
done

# ---------------------------------------------------------------- account (mode A)

if [[ -n $CI_ACCOUNT ]]; then
  if [[ $ACCOUNTING == slurmdbd ]]; then
    users=(root)
    [[ -n ${SUDO_USER:-} && ${SUDO_USER:-} != root ]] && users+=("$SUDO_USER")
    for u in "${users[@]}"; do
      [[ -n $(sacctmgr -n -P show assoc where account="$CI_ACCOUNT" user="$u" format=User 2>/dev/null) ]] && continue
      wait_until "cluster ci in slurmdbd" "$LOG/slurmctld.log" "" \
        sh -c 'sacctmgr -n -P show cluster format=Cluster | grep -qx ci'
      if [[ -z $(sacctmgr -n -P show account "$CI_ACCOUNT" format=Account 2>/dev/null) ]]; then
        sacctmgr -i add account "$CI_ACCOUNT" Cluster=ci Description=ci Organization=ci >/dev/null
      fi
      sacctmgr -i add user "$u" Account="$CI_ACCOUNT" >/dev/null
      DONE+=("added $u to account $CI_ACCOUNT")
    done
  else
    echo "slurm-up.sh: warning: SLURM_CI_ACCOUNT is ignored with SLURM_ACCOUNTING=none" >&2
  fi
fi

# ---------------------------------------------------------------- smoke test

# A job submitted while the node is still COMPLETING the previous one waits ~1-3 s for the next
# scheduler pass; wait those few ms out so that the smoke test stays fast.
not_completing() { [[ $(scontrol -o show node "$H") != *COMPLETING* ]]; }
smoke() {
  wait_until "node $H to finish COMPLETING jobs" "$LOG/slurmd.log" "" not_completing
  if ! timeout 30 srun --quiet "$@" true; then
    echo "slurm-up.sh: smoke test failed: srun $* true" >&2
    squeue --states=all >&2 || true
    for f in "$LOG/slurmctld.log" "$LOG/slurmd.log"; do echo "--- tail of $f:" >&2; tail -n 15 "$f" >&2; done
    exit 1
  fi
}
part_for() { [[ $1 == a100 || $1 == v100 ]] && echo "$1" || echo cpu; }
if ((${#gpu_types[@]})); then   # one job per type, alternating --gpus / --gres
  for i in "${!gpu_types[@]}"; do
    t=${gpu_types[$i]}
    if ((i % 2 == 0)); then smoke -p "$(part_for "$t")" --gpus="$t:1"; else smoke -p "$(part_for "$t")" --gres="gpu:$t:1"; fi
  done
elif ((NGPUS)); then
  smoke -p a100 --gpus=1
  smoke -p v100 --gres=gpu:1
else
  smoke -p cpu
fi

secs=$(awk -v a="$T0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.2f", b - a }')
gpus=$(IFS=,; echo "${node_gres[*]:-none}")
did=$(printf '%s; ' "${DONE[@]}")
did=${did%; }
echo "slurm-up: ready in ${secs}s: node $H CPUs=$CPUS Mem=${MEM_MB}MB partitions=cpu*,a100,v100 gpus=$gpus accounting=$ACCOUNTING${CI_ACCOUNT:+ account=$CI_ACCOUNT} (${did:-nothing to do})"
