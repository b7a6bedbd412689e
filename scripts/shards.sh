#!/usr/bin/env bash
# One ingestbench plan on several plain hosts, driven by GNU parallel over SSH: copy the
# binary, start shard k on host k (all at once; they meet at the rendezvous on the first
# host for every run's common start), fetch each shard's results, merge them.
#
#   scripts/shards.sh --hosts inj1,inj2,inj3 --plan-id acs-001 [--port 7070] [--bin PATH] \
#       [--out DIR] [--rendezvous HOST:PORT] [--ssh-config FILE] \
#       -- --url https://alfresco:8443 --docs 100000 --threads 60 --runs 3
#   scripts/shards.sh --local 4 --plan-id test-001 -- --url http://127.0.0.1:8080 ...
#   scripts/shards.sh --sweep --hosts ... --plan-id sweep-001 -- --access-methods lb-https,node1 ...
#
# --sweep: shard `ingestbench sweep` (each shard takes its part of every cell's workers)
#   instead of `ingestbench run`; the merge writes the whole sweep's reports.
# --hosts: SSH destinations (user@host and ~/.ssh/config Host aliases work); shard k runs on
#   the k-th. Shard 0's host must be reachable from the others on --port, at the address it
#   was reached at by SSH (asked of the host itself: $SSH_CONNECTION), unless --rendezvous
#   names another (a name only SSH knows cannot be used by the shards).
# --ssh-config: an ssh_config file for ssh and scp (-F), instead of ~/.ssh/config. The password is passed in INGESTBENCH_PASSWORD
#   through SSH's environment (SendEnv/AcceptEnv) or a --password-file present on every host.
# --local N: N shards on this machine, no SSH (GNU parallel's local mode; what CI runs).
# The merged result is printed and written to --out (default results/merged-<plan-id>).
set -euo pipefail

hosts="" local_n="" plan_id="" port=7070 bin="" out="" cmd=run rendezvous="" ssh_opts=()
while [ $# -gt 0 ]; do
  case "$1" in
    --hosts) hosts=$2; shift 2 ;;
    --local) local_n=$2; shift 2 ;;
    --sweep) cmd=sweep; shift ;;
    --plan-id) plan_id=$2; shift 2 ;;
    --port) port=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --rendezvous) rendezvous=$2; shift 2 ;;
    --ssh-config) [ -r "$2" ] || { echo "shards.sh: --ssh-config $2: cannot read it" >&2; exit 2; }
      ssh_opts=(-F "$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "shards.sh: unknown option $1 (see the header of $0)" >&2; exit 2 ;;
  esac
done
die() { echo "shards.sh: $*" >&2; exit 2; }
command -v parallel >/dev/null || die "GNU parallel is missing: apt-get install parallel (scripts/deps.sh does)"
[ -n "$plan_id" ] || die "--plan-id ID is required (the same for every shard; one per measurement)"
[ -n "$hosts" ] || [ -n "$local_n" ] || die "give --hosts h1,h2,... or --local N"
if [ -z "$bin" ]; then
  root=$(cd "$(dirname "$0")/.." && pwd)
  bin="${CARGO_TARGET_DIR:-$root/target}/release/ingestbench"
  [ -x "$bin" ] || (cd "$root" && cargo build --release --locked -q)
fi
[ -x "$bin" ] || die "--bin $bin is not an executable"
out=${out:-results/merged-$plan_id}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

if [ -n "$local_n" ]; then
  n=$local_n
  # Local mode: every shard on this machine, results straight into $work.
  seq 0 $((n - 1)) | parallel --jobs "$n" --halt now,fail=1 --line-buffer --tagstring 'shard {}' \
    "$bin" "$cmd" "$@" --quiet --shard "{}/$n" --plan-id "$plan_id" \
      --rendezvous "${rendezvous:-127.0.0.1:$port}" --results-dir "$work"
else
  IFS=, read -r -a H <<<"$hosts"
  n=${#H[@]}
  ssh_q=""; [ ${#ssh_opts[@]} -eq 0 ] || ssh_q=$(printf '%q ' "${ssh_opts[@]}")
  if [ -z "$rendezvous" ]; then
    # Shard 0's address as its own sshd saw the connection: works for Host aliases and
    # ProxyJump, where the name in --hosts means nothing to the other hosts.
    conn=$(ssh "${ssh_opts[@]}" -o BatchMode=yes "${H[0]}" 'echo $SSH_CONNECTION') \
      || die "cannot reach ${H[0]} (shard 0) over SSH to learn its address; check it with: ssh ${H[0]} true, or give --rendezvous HOST:PORT"
    addr=$(awk '{print $3}' <<<"$conn")
    [ -n "$addr" ] || die "${H[0]} did not say its address (\$SSH_CONNECTION is empty); give --rendezvous HOST:PORT"
    case "$addr" in *:*) addr="[$addr]" ;; esac
    rendezvous="$addr:$port"
  fi
  echo "shards.sh: $n shards, rendezvous at $rendezvous (shard 0 on ${H[0]})" >&2
  # Copy the binary to every host (one copy per shard: two shards may share a host), run
  # shard k on host k, fetch its results.
  remote="/tmp/ingestbench-$plan_id"
  parallel --jobs "$n" --halt now,fail=1 --link scp -q $ssh_q "$bin" "{1}:$remote-{2}" \
    ::: "${H[@]}" ::: $(seq 0 $((n - 1)))
  parallel --jobs "$n" --halt now,fail=1 --line-buffer --tagstring 'shard {2}' --link \
    ssh $ssh_q -o SendEnv=INGESTBENCH_PASSWORD '{1}' "$remote-{2}" "$cmd" "$(printf '%q ' "$@")" --quiet \
      --shard '{2}'"/$n" --plan-id "$plan_id" --rendezvous "$rendezvous" --results-dir /tmp/ingestbench-results \
    ::: "${H[@]}" ::: $(seq 0 $((n - 1)))
  parallel --jobs "$n" --link scp -q -r $ssh_q \
    "{1}:/tmp/ingestbench-results/$cmd-$plan_id-shard-{2}of$n" "$work/" \
    ::: "${H[@]}" ::: $(seq 0 $((n - 1)))
fi
dirs=()
for k in $(seq 0 $((n - 1))); do dirs+=("$work/$cmd-$plan_id-shard-${k}of$n"); done
mkdir -p "$(dirname "$out")"
"$bin" merge "${dirs[@]}" -o "$out"
for k in $(seq 0 $((n - 1))); do cp -r "$work/$cmd-$plan_id-shard-${k}of$n" "$(dirname "$out")/"; done
