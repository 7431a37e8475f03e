#!/usr/bin/env bash
# A Slurm cluster of one to three nodes on this machine, for jobgraph's tests and for trying `--executor slurm`.
#
#   scripts/slurm-local.sh up       install Slurm if missing, write a private configuration, start munged,
#                                   slurmctld and slurmd, wait until the node is idle, print the env file
#   scripts/slurm-local.sh status   whether the daemons run, and sinfo
#   scripts/slurm-local.sh down     stop exactly the daemons `up` started, by their pid files
#
# Everything lives in one private folder, $JOBGRAPH_SLURM_DIR (default /tmp/jobgraph-slurm-$UID): the
# configuration, a munge key and socket of its own (never the system's /etc/munge or /run/munge), state,
# spool, logs and pid files. Clients need only SLURM_CONF, which `up` writes to $JOBGRAPH_SLURM_DIR/env:
#
#   source "$(scripts/slurm-local.sh up)"   # or: scripts/slurm-local.sh up && source /tmp/jobgraph-slurm-0/env
#   sbatch --wrap 'hostname'
#
# Settings (environment): JOBGRAPH_SLURM_DIR; JOBGRAPH_SLURM_PORT (slurmctld's port, slurmd uses the next
# one; default 6817); JOBGRAPH_SLURM_CPUS (the CPUs the node offers; default: this machine's);
# JOBGRAPH_SLURM_NODE (the node's name; default this host's short name); JOBGRAPH_SLURM_NODES (how many
# nodes, 1-3; default 1). Several nodes are several slurmd on this host (Debian's Slurm is built with
# MULTIPLE_SLURMD), named NODE1, NODE2 …, each on a port of its own after slurmctld's, each offering
# JOBGRAPH_SLURM_CPUS CPUs and a share of the memory. Two clusters on one machine need different
# folders, ports and node names (a node's cgroups are named after it).
# JOBGRAPH_SLURM_ACCOUNTING=1 adds accounting: Debian's mariadb-server and slurmdbd (installed when missing),
# MariaDB started without systemd in the private folder on port +10 of slurmctld's, slurmdbd on +9, so
# that `sacct` answers; and memory is then enforced (cgroup memory, CR_Core_Memory, DefMemPerCPU=200),
# so that a job over its `--mem` ends OUT_OF_MEMORY.
# Needs root: slurmd starts job steps as their submitting user, and package installation needs apt.
set -euo pipefail

dir=${JOBGRAPH_SLURM_DIR:-/tmp/jobgraph-slurm-$(id -u)}
port=${JOBGRAPH_SLURM_PORT:-6817}
cpus=${JOBGRAPH_SLURM_CPUS:-$(nproc)}
node=${JOBGRAPH_SLURM_NODE:-$(hostname -s)}
node_count=${JOBGRAPH_SLURM_NODES:-1}
case "$node_count" in 1 | 2 | 3) ;; *) echo "slurm-local: error: JOBGRAPH_SLURM_NODES must be 1, 2 or 3" >&2; exit 1 ;; esac
# The nodes' names: one node keeps the name it is given; several are numbered.
if [ "$node_count" -eq 1 ]; then nodes=("$node"); else nodes=(); for i in $(seq 1 "$node_count"); do nodes+=("$node$i"); done; fi
node_list=$(IFS=,; echo "${nodes[*]}")
accounting=${JOBGRAPH_SLURM_ACCOUNTING:-}

say() { echo "slurm-local: $*" >&2; }
die() { say "error: $*"; exit 1; }

install_packages() {
    local missing=() wanted=(slurmctld slurmd slurm-client munge)
    [ -n "$accounting" ] && wanted+=(mariadb-server slurmdbd)
    for package in "${wanted[@]}"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    ((${#missing[@]})) || return 0
    [ "$(id -u)" -eq 0 ] || die "Slurm is not installed and installing it needs root: apt-get install ${missing[*]}"
    say "installing ${missing[*]}"
    # The packages' postinst scripts would start the system-wide daemons (with /etc/slurm, /etc/munge);
    # a policy-rc.d that denies every start keeps them down. One already there is left as it is.
    local policy=/usr/sbin/policy-rc.d made_policy=""
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\n# slurm-local.sh: no daemon starts during package installation\nexit 101\n' >"$policy"
        chmod 755 "$policy"
        made_policy=1
    fi
    local status=0
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
        "${missing[@]}" >"$dir/apt.log" 2>&1 || status=$?
    if [ "$status" -ne 0 ]; then
        apt-get -o DPkg::Lock::Timeout=600 update -qq >>"$dir/apt.log" 2>&1 || true
        status=0
        DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
            "${missing[@]}" >>"$dir/apt.log" 2>&1 || status=$?
    fi
    [ -n "$made_policy" ] && rm -f "$policy"
    [ "$status" -eq 0 ] || die "apt-get install ${missing[*]} failed; see $dir/apt.log"
}

# Whether the process in pid file $1 runs the program $2 (a recycled pid is not ours).
running() {
    local pid
    [ -s "$1" ] || return 1
    pid=$(cat "$1")
    [ -d "/proc/$pid" ] || return 1
    [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$(readlink -f "$2")" ]
}

# Proctrack: cgroup tracking finds every process of a step, double-forked ones included, so `scancel`
# leaves none behind; linuxproc follows the parent chain and loses a process whose parent exited. cgroup
# needs a writable cgroup hierarchy (v1 with a freezer controller, or v2 with its controllers delegated).
proctrack() {
    if [ -w /sys/fs/cgroup/freezer ] || { [ -f /sys/fs/cgroup/cgroup.controllers ] && [ -w /sys/fs/cgroup ]; }; then
        echo proctrack/cgroup
    else
        say "WARNING: no writable cgroup hierarchy here (/sys/fs/cgroup/freezer or a cgroup2 root);"
        say "WARNING: falling back to proctrack/linuxproc, which loses double-forked processes on scancel"
        echo proctrack/linuxproc
    fi
}

write_configuration() {
    mkdir -p "$dir/etc" "$dir/state" "$dir/spool" "$dir/log" "$dir/run" "$dir/munge-key" "$dir/munge-run" "$dir/munge"
    # munged insists that its key folder is private and that the socket's folder can be searched by
    # every user who submits; two folders, so neither rule weakens the other.
    chmod 700 "$dir/munge-key" "$dir/munge"
    chmod 755 "$dir" "$dir/munge-run"
    if [ ! -s "$dir/munge-key/munge.key" ]; then
        dd if=/dev/urandom of="$dir/munge-key/munge.key" bs=1024 count=1 status=none
    fi
    chmod 400 "$dir/munge-key/munge.key"

    local memory tracking
    memory=$(awk -v n="$node_count" '/^MemTotal:/ { print int((int($2 / 1024) - 512) / n) }' /proc/meminfo)
    tracking=$(proctrack)
    local select_parameters=CR_Core task_plugin=task/none constrain_ram=no
    local accounting_lines="AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none"
    if [ -n "$accounting" ]; then
        # Memory is a resource (each job gets DefMemPerCPU per CPU, not the node's whole memory) and a
        # limit: the cgroup's memory controller ends a job over its --mem, which Slurm calls OUT_OF_MEMORY.
        select_parameters=CR_Core_Memory
        task_plugin=task/cgroup
        constrain_ram=yes
        # AccountingStoragePass names the munge socket: without it, munge looks for its default socket.
        accounting_lines="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$((port + 9))
AccountingStoragePass=$dir/munge-run/munge.socket
JobAcctGatherType=jobacct_gather/cgroup
DefMemPerCPU=200"
    fi
    cat >"$dir/etc/slurm.conf" <<EOF
# Written by scripts/slurm-local.sh: a cluster of $node_count node(s) on this machine for jobgraph's tests.
ClusterName=jobgraph
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge-run/munge.socket
StateSaveLocation=$dir/state
# %n: each slurmd of this host (one per node) has its own spool, pid file and log.
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd-%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$dir/etc/plugstack.conf
MpiDefault=none
MailProg=/bin/true
SwitchType=switch/none
ProctrackType=$tracking
TaskPlugin=$task_plugin
# --nice (from a task's QoS) also becomes the niceness of the process on the node.
PropagatePrioProcess=1
SelectType=select/cons_tres
SelectTypeParameters=$select_parameters
SchedulerType=sched/backfill
# Start a batch job as soon as it is submitted, and look again every second (the defaults wait seconds).
SchedulerParameters=batch_sched_delay=0,sched_interval=1,bf_interval=1,sched_min_interval=0
# A request the partition can never satisfy fails at submission instead of pending forever.
EnforcePartLimits=ALL
$accounting_lines
JobCompType=jobcomp/none
ReturnToService=2
KillWait=5
MinJobAge=300
# The node may offer more CPUs than the machine has (JOBGRAPH_SLURM_CPUS), for tests of --jobs.
SlurmdParameters=config_overrides
EOF
    local index=0 name
    for name in "${nodes[@]}"; do
        # The first node listens on SlurmdPort; each further one on a port of its own after it.
        echo "NodeName=$name NodeHostname=$(hostname -s) NodeAddr=127.0.0.1 Port=$((port + 1 + index)) CPUs=$cpus RealMemory=$memory State=UNKNOWN" \
            >>"$dir/etc/slurm.conf"
        index=$((index + 1))
    done
    echo "PartitionName=debug Nodes=$node_list Default=YES MaxTime=2:00:00 State=UP" >>"$dir/etc/slurm.conf"
    cat >"$dir/etc/cgroup.conf" <<EOF
# Written by scripts/slurm-local.sh: cgroups track a step's processes; memory is constrained with accounting only.
CgroupPlugin=autodetect
CgroupAutomount=no
CgroupMountpoint=/sys/fs/cgroup
ConstrainCores=no
ConstrainRAMSpace=$constrain_ram
ConstrainSwapSpace=no
ConstrainDevices=no
EOF
    : >"$dir/etc/plugstack.conf"
    printf 'export SLURM_CONF=%s\n' "$dir/etc/slurm.conf" >"$dir/env"
}

# Accounting: a MariaDB of the folder's own (no systemd, no /etc/mysql: --no-defaults), a database user
# for slurmdbd, and slurmdbd itself; returns once `sacctmgr` answers.
start_accounting() {
    local db=$dir/mariadb
    mkdir -p "$db/data" "$db/run"
    if [ ! -d "$db/data/mysql" ]; then
        mariadb-install-db --no-defaults --user=root --datadir="$db/data" --auth-root-authentication-method=socket \
            --skip-test-db >"$dir/log/mariadb-install.log" 2>&1 || die "mariadb-install-db failed; see $dir/log/mariadb-install.log"
    fi
    # mariadbd stays in the foreground: setsid --fork leaves it running in a session of its own, and
    # returns at once; `detached` leaves it no descriptor of ours.
    detached setsid --fork mariadbd --no-defaults --user=root --datadir="$db/data" --socket="$db/run/mysqld.sock" \
        --pid-file="$db/run/mariadbd.pid" --port=$((port + 10)) --bind-address=127.0.0.1 --skip-log-bin \
        --innodb-buffer-pool-size=32M --log-error="$dir/log/mariadb.log" </dev/null >/dev/null 2>&1
    local ready=""
    for _ in $(seq 1 300); do
        if mariadb-admin --no-defaults --socket="$db/run/mysqld.sock" -u root ping >/dev/null 2>&1; then ready=1; break; fi
        sleep 0.1
    done
    [ -n "$ready" ] || die "MariaDB did not start; see $dir/log/mariadb.log"
    mariadb --no-defaults --socket="$db/run/mysqld.sock" -u root -e \
        "CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'jobgraph'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';" \
        || die "cannot create MariaDB's user for slurmdbd"
    cat >"$dir/etc/slurmdbd.conf" <<EOF
# Written by scripts/slurm-local.sh: accounting in the folder's own MariaDB.
AuthType=auth/munge
AuthInfo=socket=$dir/munge-run/munge.socket
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$((port + 9))
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$((port + 10))
StorageUser=slurm
StoragePass=jobgraph
StorageLoc=slurm_acct_db
PidFile=$dir/run/slurmdbd.pid
LogFile=$dir/log/slurmdbd.log
EOF
    chmod 600 "$dir/etc/slurmdbd.conf"
    # slurmdbd reads the slurmdbd.conf beside $SLURM_CONF.
    SLURM_CONF="$dir/etc/slurm.conf" detached slurmdbd </dev/null >>"$dir/log/slurmdbd.out" 2>&1 \
        || die "slurmdbd did not start; see $dir/log/slurmdbd.log"
    for _ in $(seq 1 150); do
        if SLURM_CONF="$dir/etc/slurm.conf" sacctmgr --noheader list cluster >/dev/null 2>&1; then
            # slurmctld registers a cluster that the database knows.
            SLURM_CONF="$dir/etc/slurm.conf" sacctmgr --immediate add cluster jobgraph >/dev/null 2>&1 || true  # there already
            return 0
        fi
        sleep 0.1
    done
    die "slurmdbd does not answer; see $dir/log/slurmdbd.log"
}

# Waits until every node is up (idle, or running jobs).
wait_idle() {
    local states
    for _ in $(seq 1 150); do
        states=$(SLURM_CONF="$dir/etc/slurm.conf" sinfo -h -N -n "$node_list" -o '%T' 2>/dev/null || true)
        if [ "$(echo "$states" | grep -cE '^(idle|mixed|allocated)$')" -eq "$node_count" ]; then return 0; fi
        sleep 0.1
    done
    say "the nodes are '$(echo ${states:-unknown})' after 15 s; last lines of the daemons' logs:"
    tail -n 15 "$dir/log/slurmctld.log" "$dir"/log/slurmd-*.log >&2 2>/dev/null || true
    return 1
}

# Whether every node's slurmd runs.
slurmds_running() {
    local name
    for name in "${nodes[@]}"; do running "$dir/run/slurmd-$name.pid" /usr/sbin/slurmd || return 1; done
}

up() {
    mkdir -p "$dir"
    chmod 755 "$dir"
    install_packages
    if running "$dir/run/slurmctld.pid" /usr/sbin/slurmctld && slurmds_running && { [ -z "$accounting" ] || running "$dir/run/slurmdbd.pid" /usr/sbin/slurmdbd; } && grep -q "^PartitionName=debug Nodes=$node_list " "$dir/etc/slurm.conf"; then
        wait_idle || die "the cluster in $dir runs but its node is not idle"
        echo "$dir/env"
        return 0
    fi
    stop_daemons
    write_configuration
    export SLURM_CONF="$dir/etc/slurm.conf"

    detached munged --socket="$dir/munge-run/munge.socket" --key-file="$dir/munge-key/munge.key" \
        --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed" \
        --force </dev/null >/dev/null 2>"$dir/munge/start.err" || die "munged did not start: $(cat "$dir/munge/start.err")"
    # -c: start from a clean state, so no job of an earlier `up` comes back.
    # The daemons' standard streams go to files: a caller reading this script's output to its end must
    # not wait for them.
    [ -n "$accounting" ] && start_accounting
    detached slurmctld -c -f "$SLURM_CONF" </dev/null >>"$dir/log/slurmctld.out" 2>&1 || die "slurmctld did not start; see $dir/log/slurmctld.log"
    local name
    for name in "${nodes[@]}"; do
        mkdir -p "$dir/spool/$name"
        detached slurmd -f "$SLURM_CONF" -N "$name" </dev/null >>"$dir/log/slurmd.out" 2>&1 || die "slurmd -N $name did not start; see $dir/log/slurmd-$name.log"
    done
    wait_idle || die "the nodes did not become idle"
    say "up: node(s) $node_list, $cpus CPUs each, $(grep ^ProctrackType "$SLURM_CONF" | cut -d= -f2)"
    echo "$dir/env"
}

# Runs a daemon with no descriptor of ours beyond 0-2 (redirected by the caller): one inherited from
# whoever runs this script, such as the write end of a pipe it reads to the end, would keep that open.
detached() {
    (
        for fd in /proc/$BASHPID/fd/*; do
            fd=${fd##*/}
            if [ "$fd" -gt 2 ]; then eval "exec $fd>&-"; fi
        done
        exec "$@"
    )
}

# Stops one daemon by its pid file: SIGTERM, then SIGKILL after 10 s.
stop() {
    local file=$1 program=$2 pid
    running "$file" "$program" || { rm -f "$file"; return 0; }
    pid=$(cat "$file")
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do
        [ -d "/proc/$pid" ] || break
        sleep 0.1
    done
    [ -d "/proc/$pid" ] && kill -KILL "$pid" 2>/dev/null || true
    rm -f "$file"
}

stop_daemons() {
    local file
    # Every slurmd this folder started, also of an earlier `up` with other nodes. `slurmd-*`: `slurmd*`
    # also matched slurmdbd.pid, whose file `stop` then removed as not slurmd's, and slurmdbd ran on.
    for file in "$dir"/run/slurmd-*.pid; do [ -e "$file" ] && stop "$file" /usr/sbin/slurmd; done
    stop "$dir/run/slurmctld.pid" /usr/sbin/slurmctld
    stop "$dir/run/slurmdbd.pid" /usr/sbin/slurmdbd
    stop "$dir/mariadb/run/mariadbd.pid" /usr/sbin/mariadbd
    stop "$dir/munge/munged.pid" /usr/sbin/munged
}

status() {
    local all=0
    local daemons=("run/slurmctld.pid slurmctld") name
    for name in "${nodes[@]}"; do daemons+=("run/slurmd-$name.pid slurmd"); done
    for daemon in "${daemons[@]}" "munge/munged.pid munged"; do
        set -- $daemon
        if running "$dir/$1" "/usr/sbin/$2"; then echo "$2: running (pid $(cat "$dir/$1"))"; else echo "$2: stopped"; all=1; fi
    done
    if [ "$all" -eq 0 ]; then
        SLURM_CONF="$dir/etc/slurm.conf" sinfo
        echo "env: $dir/env"
    fi
    return "$all"
}

case "${1:-}" in
    up) up ;;
    down) stop_daemons; say "down" ;;
    status) status ;;
    *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
