#!/usr/bin/env bash
# A single-node Slurm cluster in a scratch folder, for the tests: munged, slurmctld and slurmd
# from Debian's slurm-wlm packages, all running as root with their sockets, state and logs under
# DIR and their own ports, so they never touch a system Slurm or munge.
#   slurm_cluster.sh start DIR   generate DIR/slurm.conf, start the daemons, wait for the node
#   slurm_cluster.sh stop DIR    stop them (and remove DIR)
# Clients then use SLURM_CONF=DIR/slurm.conf. Exits 77 with the reason on stderr when Slurm
# cannot run here (not root, packages missing), so a test can skip saying why.
set -euo pipefail
cmd=${1:?usage: slurm_cluster.sh start|stop DIR}
dir=${2:?usage: slurm_cluster.sh start|stop DIR}

unavailable() { echo "slurm_cluster: $*" >&2; exit 77; }

# Every process of this cluster: the daemons carry a marker in their environment (a caller's
# SLURM_CONF would also match the caller and this script), job steps and jobs descend from them.
cluster_pids() {
  local roots
  roots=$(grep -lsaz "^TUNED_SLURM_CLUSTER=$dir\$" /proc/[0-9]*/environ | cut -d/ -f3 || true)
  [ -n "$roots" ] || return 0
  ps -e -o pid=,ppid= | awk -v roots="$roots" '
    BEGIN { n = split(roots, r, " "); for (i = 1; i <= n; i++) keep[r[i]] = 1 }
    { parent[$1] = $2 }
    END {
      for (pid in parent) {
        for (p = pid; p in parent && p > 1; p = parent[p]) if (p in keep) { print pid; break }
      }
    }'
}

stop() {
  if [ -f "$dir/slurm.conf" ]; then
    # Jobs first, while slurmctld can still end them (they drain on SIGTERM), then the daemons.
    SLURM_CONF="$dir/slurm.conf" scancel --quiet --user="$(id -un)" 2>/dev/null || true
    for _ in $(seq 150); do
      [ -z "$(SLURM_CONF="$dir/slurm.conf" squeue -h 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  for signal in TERM KILL; do
    pids=$(cluster_pids)
    [ -n "${pids// /}" ] || break
    kill -s "$signal" $pids 2>/dev/null || true
    for _ in $(seq 25); do
      alive=0
      for pid in $pids; do kill -0 "$pid" 2>/dev/null && alive=1; done
      [ $alive -eq 0 ] && break
      sleep 0.2
    done
  done
  rm -rf "$dir"
}

if [ "$cmd" = stop ]; then stop; exit 0; fi
[ "$cmd" = start ] || { echo "slurm_cluster: unknown command '$cmd'" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || unavailable "needs root (slurmd runs jobs as their users)"
for tool in munged slurmctld slurmd sbatch; do
  command -v "$tool" >/dev/null || unavailable "$tool not installed (Debian: slurmctld slurmd slurm-client munge)"
done

# slurmctld and slurmd look their node up by host name (a real machine lists it in /etc/hosts;
# a bare chroot may not).
getent hosts "$(hostname -s)" >/dev/null ||
  unavailable "the host name '$(hostname -s)' does not resolve (add it to /etc/hosts)"

mkdir -p "$dir"/{state,spool,log,munge}
chmod 700 "$dir/munge"
dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none
chmod 600 "$dir/munge/munge.key"
export TUNED_SLURM_CLUSTER="$dir"  # marks the daemons for `stop`
# A daemon that refuses to start says why in its log, not on stderr: show it.
failed() {
  echo "slurm_cluster: $* did not start; logs:" >&2
  tail -n 20 "$dir"/log/*.log >&2 2>/dev/null || true
  stop
  exit 1
}
munged --force --socket="$dir/munge/socket" --key-file="$dir/munge/munge.key" \
  --log-file="$dir/log/munged.log" --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/seed" ||
  failed munged

node=$(hostname -s)
# Ports from the folder's name, so two test runs on one machine do not collide.
base=$((20000 + $(cksum <<<"$dir" | cut -d' ' -f1) % 20000))
cat >"$dir/slurm.conf" <<CONF
ClusterName=tunedtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$base
SlurmdPort=$((base + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
KillWait=30
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
export SLURM_CONF="$dir/slurm.conf"
slurmctld -i || failed slurmctld
slurmd || failed slurmd
for _ in $(seq 100); do
  if sinfo -h -o %T 2>/dev/null | grep -q idle; then exit 0; fi
  sleep 0.2
done
echo "slurm_cluster: the node did not come up; slurmctld log:" >&2
tail -n 20 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2 || true
stop
exit 1
