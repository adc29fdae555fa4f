#!/usr/bin/env bash
# Single-node throwaway Ceph RADOS Gateway for tests.
#
#   bootstrap.sh STATE_DIR RGW_PORT ACCESS_KEY SECRET_KEY [MON_PORT]
#       Creates a fresh cluster in STATE_DIR (1 mon + 1 memstore OSD, no mgr),
#       starts mon, osd and radosgw in the background (pids in STATE_DIR/pids/),
#       waits until RGW answers HTTP on 127.0.0.1:RGW_PORT, creates the S3 user
#       (uid "tester", caps roles=*;user-policy=*) and the STS role
#       "updraft-test-role" (trusts the user, role policy allows s3:* on *).
#       Prints "ROLE_ARN=<arn>" and finally "READY" on success; exits non-zero
#       and prints the relevant log tails on failure (daemons are stopped then).
#       MON_PORT defaults to a free loopback port.
#       If WATCH_PID is set in the environment, a watchdog stops the cluster
#       when that process disappears (e.g. the test runner crashed).
#
#   bootstrap.sh stop STATE_DIR
#       SIGKILLs every daemon (memstore OSD must not get SIGTERM: it would
#       serialise its whole store to disk) and the watchdog. Does not remove
#       STATE_DIR.
#
# Nothing outside STATE_DIR is read or written: every ceph tool gets
# -c STATE_DIR/ceph.conf, --cluster ceph and an explicit keyring.
set -euo pipefail

USER_UID=tester
ROLE_NAME=updraft-test-role

stop_cluster() {
  local dir="$1" pid name
  [ -d "$dir/pids" ] || return 0
  # watchdog first, so it does not race with us
  for name in watchdog radosgw osd mon; do
    [ -f "$dir/pids/$name.pid" ] || continue
    pid="$(cat "$dir/pids/$name.pid" 2>/dev/null || true)"
    [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null || true
  done
  # wait (briefly) until they are really gone
  local i
  for i in $(seq 1 50); do
    local alive=0
    for name in radosgw osd mon; do
      [ -f "$dir/pids/$name.pid" ] || continue
      pid="$(cat "$dir/pids/$name.pid" 2>/dev/null || true)"
      # a zombie (state Z) is dead: it holds no memory or ports, only waits for reaping
      if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null \
        && [ "$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -c1)" != Z ]; then alive=1; fi
    done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  rm -f "$dir/pids/"*.pid
}

if [ "${1:-}" = "stop" ]; then
  [ $# -ge 2 ] || { echo "usage: $0 stop STATE_DIR" >&2; exit 2; }
  stop_cluster "$2"
  exit 0
fi

if [ $# -lt 4 ]; then
  echo "usage: $0 STATE_DIR RGW_PORT ACCESS_KEY SECRET_KEY [MON_PORT]" >&2
  echo "       $0 stop STATE_DIR" >&2
  exit 2
fi

STATE="$(mkdir -p "$1" && cd "$1" && pwd)"
RGW_PORT="$2"
ACCESS_KEY="$3"
SECRET_KEY="$4"
MON_PORT="${5:-}"
T0="${EPOCHREALTIME/./}"

for bin in ceph-mon ceph-osd radosgw radosgw-admin monmaptool ceph-authtool ceph; do
  if ! command -v "$bin" >/dev/null 2>&1; then
    echo "missing $bin: apt-get install -y --no-install-recommends radosgw ceph-mon ceph-osd" >&2
    exit 3
  fi
done

if [ -z "$MON_PORT" ]; then
  # any free loopback port: bind to 0 and read it back
  MON_PORT="$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])' 2>/dev/null \
    || node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
fi

log() { local ms=$(( (${EPOCHREALTIME/./} - T0) / 1000 )); printf '[rgw-bootstrap +%d.%03ds] %s\n' $((ms / 1000)) $((ms % 1000)) "$*" >&2; }

fail() {
  # stop first: whatever happens to our stderr, no daemon is left behind
  trap '' PIPE
  set +e
  stop_cluster "$STATE"
  {
    echo "bootstrap failed: $*"
    local f
    for f in "$STATE"/log/*.out "$STATE"/log/client.rgw.a.log "$STATE"/log/osd.0.log \
      "$STATE"/log/mon.a.log "$STATE"/log/cluster.log; do
      [ -s "$f" ] || continue
      echo "----- tail $f -----"
      tail -n 25 "$f" | cut -c1-400
    done
  } >&2
  exit 1
}
# a failed step or a signal (e.g. the caller's timeout) must not leave daemons behind
trap 'fail "interrupted"' INT TERM HUP
trap 'fail "command failed at line $LINENO"' ERR

mkdir -p "$STATE"/{mon,osd/ceph-0,log,run,pids,crash,rgw}
CONF="$STATE/ceph.conf"
KEYRING="$STATE/keyring"
FSID="$(cat /proc/sys/kernel/random/uuid)"
OSD_UUID="$(cat /proc/sys/kernel/random/uuid)"
# rgw sts key must be exactly 16 characters
STS_KEY="$(od -An -tx1 -N8 /dev/urandom | tr -d ' \n')"

cat >"$CONF" <<EOF
[global]
fsid = $FSID
mon host = [v2:127.0.0.1:$MON_PORT]
mon initial members = a
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind msgr1 = false
ms bind ipv6 = false
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
keyring = $KEYRING
run dir = $STATE/run
admin socket = $STATE/run/\$cluster-\$name.asok
log file = $STATE/log/\$name.log
mon cluster log file = $STATE/log/cluster.log
crash dir = $STATE/crash
log to stderr = false
err to stderr = false
log to syslog = false
debug ms = 0
debug mon = 1
debug osd = 1
debug rgw = 1
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
# single mon: no reason to batch paxos proposals for a second
paxos propose interval = 0.01
paxos min wait = 0.01
mon data avail warn = 1
mon data avail crit = 0

[mon]
mon data = $STATE/mon/\$cluster-\$id

[osd]
osd data = $STATE/osd/\$cluster-\$id
osd objectstore = memstore
memstore device bytes = 4294967296
osd journal size = 0
osd memory target = 939524096

[client]
# librados re-requests a missed osdmap on this tick (default 5 s)
objecter tick interval = 1
# CLI tools (radosgw-admin, ceph) may overlap: one socket per process
admin socket = $STATE/run/\$cluster-\$name.\$pid.asok

[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:$RGW_PORT
rgw data = $STATE/rgw
rgw s3 auth use sts = true
rgw sts key = $STS_KEY
rgw crypt require ssl = false
rgw enable usage log = false
rgw enable ops log = false
rgw thread pool size = 64
# Deleted objects and aborted uploads keep their data until RGW's garbage collector reclaims it,
# two hours later by default: a long run (npm run soak) filled the 4 GiB memstore, the OSD went
# full and RGW stopped answering. Reclaim within seconds instead.
rgw gc obj min wait = 2
rgw gc processor period = 5
rgw gc processor max time = 5
EOF

log "state=$STATE mon=$MON_PORT rgw=$RGW_PORT"

C=(-c "$CONF" --cluster ceph)
# one keyring for every entity; mon --mkfs imports all of them into the auth db
ceph-authtool "${C[@]}" --create-keyring "$KEYRING" --gen-key -n mon. --cap mon 'allow *' >/dev/null
ceph-authtool "${C[@]}" "$KEYRING" --gen-key -n client.admin \
  --cap mon 'allow *' --cap osd 'allow *' --cap mgr 'allow *' --cap mds 'allow *' >/dev/null
ceph-authtool "${C[@]}" "$KEYRING" --gen-key -n osd.0 \
  --cap mon 'allow profile osd' --cap osd 'allow *' --cap mgr 'allow profile osd' >/dev/null
ceph-authtool "${C[@]}" "$KEYRING" --gen-key -n client.rgw.a \
  --cap mon 'allow rw' --cap osd 'allow rwx' --cap mgr 'allow rw' >/dev/null

monmaptool --create --clobber --fsid "$FSID" --addv a "[v2:127.0.0.1:$MON_PORT]" "$STATE/monmap" >/dev/null
ceph-mon "${C[@]}" -i a --mkfs --monmap "$STATE/monmap" --keyring "$KEYRING" \
  >"$STATE/log/mon-mkfs.out" 2>&1 || fail "ceph-mon --mkfs"

# spawn NAME CMD...: run a daemon in the foreground (-f, so its pid is known) under a
# small "nanny" subshell that waits for it. The nanny reaps the daemon the moment it is
# killed, so no <defunct> ceph process lingers even where init reaps orphans slowly.
# Neither inherits our stdout/stderr (the caller reads those until EOF).
spawn() {
  local name="$1"; shift
  rm -f "$STATE/pids/$name.pid"
  (
    trap - ERR INT TERM HUP
    "$@" </dev/null >"$STATE/log/$name.out" 2>&1 &
    echo $! >"$STATE/pids/$name.pid.tmp"
    mv "$STATE/pids/$name.pid.tmp" "$STATE/pids/$name.pid"
    wait $! || true
  ) </dev/null >/dev/null 2>&1 &
  disown
  local i
  for i in $(seq 1 500); do
    [ -s "$STATE/pids/$name.pid" ] && return 0
    sleep 0.01
  done
  fail "could not start $name"
}

spawn mon ceph-mon "${C[@]}" -i a -f

if [ -n "${WATCH_PID:-}" ]; then
  # kill the cluster if the test process dies without calling stop()
  SELF="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
  nohup setsid bash -c 'while kill -0 "$1" 2>/dev/null && [ -d "$2/pids" ]; do sleep 1; done
    [ -d "$2/pids" ] && rm -f "$2/pids/watchdog.pid" && bash "$3" stop "$2"
    [ -n "$4" ] && rm -rf "$2"' _ "$WATCH_PID" "$STATE" "$SELF" "${WATCH_RMDIR:-}" \
    </dev/null >/dev/null 2>&1 &
  echo $! >"$STATE/pids/watchdog.pid"; disown
fi

# wait_for DESC CMD...: poll CMD every 20 ms until it succeeds; fail if a started daemon
# dies or the overall deadline passes
DEADLINE=$(( $(date +%s) + ${RGW_START_TIMEOUT:-80} ))
wait_for() {
  local desc="$1" name pid; shift
  until "$@"; do
    for name in mon osd radosgw; do
      [ -f "$STATE/pids/$name.pid" ] || continue
      pid="$(cat "$STATE/pids/$name.pid")"
      kill -0 "$pid" 2>/dev/null || fail "$name exited while waiting for $desc"
    done
    [ "$(date +%s)" -lt "$DEADLINE" ] || fail "timed out waiting for $desc"
    sleep 0.02
  done
}

# the OSD store is made while `ceph osd new` registers osd.0 with the mon
ceph-osd "${C[@]}" -i 0 --mkfs --osd-uuid "$OSD_UUID" >"$STATE/log/osd-mkfs.out" 2>&1 &
MKFS_PID=$!
CEPH=(ceph "${C[@]}" -n client.admin -k "$KEYRING" --connect-timeout 20)
"${CEPH[@]}" osd new "$OSD_UUID" 0 >"$STATE/log/osd-new.out" 2>&1 || fail "ceph osd new"
wait "$MKFS_PID" || fail "ceph-osd --mkfs"
log "mon up, osd.0 registered"

spawn osd ceph-osd "${C[@]}" -i 0 -f
# Start radosgw only once the OSD is active: a librados client whose first op finds no
# up OSD only re-asks the mon for a new osdmap on its next tick (several seconds).
osd_active() { grep -q 'state: booting -> active' "$STATE/log/osd.0.log" 2>/dev/null; }
wait_for "osd.0 to become active" osd_active
log "osd.0 active"

spawn radosgw radosgw "${C[@]}" -n client.rgw.a -f

# wait for HTTP on the RGW port (no curl dependency: bash /dev/tcp)
rgw_answers() {
  local line
  { exec 3<>"/dev/tcp/127.0.0.1/$RGW_PORT"; } 2>/dev/null || return 1
  printf 'GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3 || { exec 3>&-; return 1; }
  IFS= read -r -t 5 line <&3 || line=""
  exec 3>&- 3<&-
  [[ "$line" == HTTP/1.1\ * ]]
}
wait_for "radosgw to answer HTTP on 127.0.0.1:$RGW_PORT" rgw_answers
log "radosgw answers HTTP"

ADMIN=(radosgw-admin "${C[@]}" -n client.admin -k "$KEYRING")
"${ADMIN[@]}" user create --uid "$USER_UID" --display-name "updraft tests" \
  --access-key "$ACCESS_KEY" --secret-key "$SECRET_KEY" --caps 'roles=*;user-policy=*' \
  >"$STATE/log/admin-user.out" 2>&1 || fail "radosgw-admin user create"

TRUST='{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":["arn:aws:iam:::user/'"$USER_UID"'"]},"Action":["sts:AssumeRole"]}]}'
"${ADMIN[@]}" role create --role-name "$ROLE_NAME" --assume-role-policy-doc "$TRUST" \
  >"$STATE/log/admin-role.out" 2>&1 || fail "radosgw-admin role create"
ROLE_POLICY='{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:*"],"Resource":["*"]}]}'
"${ADMIN[@]}" role-policy put --role-name "$ROLE_NAME" --policy-name allow-s3 \
  --policy-doc "$ROLE_POLICY" >"$STATE/log/admin-role-policy.out" 2>&1 || fail "radosgw-admin role-policy put"

ROLE_ARN="$(sed -n '/"Arn"/{s/.*"Arn": *"\([^"]*\)".*/\1/p;q;}' "$STATE/log/admin-role.out")"
[ -n "$ROLE_ARN" ] || ROLE_ARN="arn:aws:iam:::role/$ROLE_NAME"
log "user and role created"
echo "ROLE_ARN=$ROLE_ARN"
echo "MON_PORT=$MON_PORT"
echo READY
