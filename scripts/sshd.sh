#!/usr/bin/env bash
# A throwaway OpenSSH server on loopback for the SSH path's tests (scripts/shards.sh): its own
# host key, client key, config, port and pid file in DIR; the system's sshd and ~/.ssh are
# left alone. It listens on 127.0.0.1 and 127.0.0.2 (two "injectors" on one machine) and
# writes DIR/ssh_config, where `inj1` is a Host alias of 127.0.0.1 (a name only SSH knows).
#   scripts/sshd.sh up DIR PORT    # start (daemon), wait until it answers; exit 3: PORT taken
#   scripts/sshd.sh down DIR       # stop it by its pid
# Needs Debian's openssh-server (scripts/deps.sh installs it) and root (sshd's privilege
# separation); logins are as the user running this, by key only.
set -euo pipefail
die() { echo "sshd.sh: $*" >&2; exit 2; }
cmd=${1:-} dir=${2:-}
[ -n "$dir" ] || die "usage: $0 up DIR PORT | down DIR"
stop() { [ -f "$dir/sshd.pid" ] && kill "$(cat "$dir/sshd.pid")" 2>/dev/null || true; }
case "$cmd" in
  up)
    port=${3:?sshd.sh up DIR PORT}
    sshd=/usr/sbin/sshd
    [ -x "$sshd" ] || die "$sshd missing: apt-get install openssh-server (scripts/deps.sh does)"
    mkdir -p "$dir" /run/sshd
    dir=$(cd "$dir" && pwd)
    [ -f "$dir/host_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -f "$dir/host_ed25519"
    [ -f "$dir/id_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -f "$dir/id_ed25519"
    cp "$dir/id_ed25519.pub" "$dir/authorized_keys"
    cat >"$dir/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
ListenAddress 127.0.0.2
HostKey $dir/host_ed25519
PidFile $dir/sshd.pid
AuthorizedKeysFile $dir/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AcceptEnv INGESTBENCH_PASSWORD
Subsystem sftp internal-sftp
CONF
    cat >"$dir/ssh_config" <<CONF
Host inj1
  HostName 127.0.0.1
Host inj1 127.0.0.1 127.0.0.2
  Port $port
  User $(id -un)
  IdentityFile $dir/id_ed25519
  IdentitiesOnly yes
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  LogLevel ERROR
  BatchMode yes
  ConnectTimeout 5
CONF
    "$sshd" -t -f "$dir/sshd_config" || die "sshd refuses $dir/sshd_config"
    : >"$dir/sshd.log"
    rm -f "$dir/sshd.pid"
    "$sshd" -f "$dir/sshd_config" -E "$dir/sshd.log"
    # sshd forks before it binds, so a port taken meanwhile shows only in its log; under a
    # loaded CI machine the first login can take seconds. Wait up to 30 s, but stop as soon
    # as sshd has given up, and say why.
    deadline=$((SECONDS + 30)) err=
    while [ $SECONDS -lt $deadline ]; do
      if grep -qE 'Cannot bind any address|Address already in use' "$dir/sshd.log"; then
        echo "sshd.sh: port $port is taken (sshd.log: $(tail -n 2 "$dir/sshd.log" | tr '\n' ' '))" >&2
        stop
        exit 3
      fi
      # sshd writes its pid file once it has bound every address it could.
      [ -f "$dir/sshd.pid" ] && err=$(ssh -F "$dir/ssh_config" inj1 true 2>&1) && exit 0
      sleep 0.1
    done
    stop
    die "sshd on port $port did not answer within 30 s; last ssh error: ${err:-none}; sshd.log: $(tail -n 5 "$dir/sshd.log" | tr '\n' ' ')"
    ;;
  down) stop ;;
  *) die "usage: $0 up DIR PORT | down DIR" ;;
esac
