# env.sh — sourced by up.sh and down.sh: where the test services keep their state, and the
# few helpers every service script uses. Not meant to be run on its own.

set -euo pipefail

SERVICES_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO_ROOT=$(cd "$SERVICES_DIR/../.." && pwd -P)
# Git-ignored; `down.sh && rm -rf .services` resets every service. Resolved when it is a
# link (a git worktree sharing another checkout's services), so that the servers' own files
# (a binlog index, a data directory) name the real directory, not the link.
STATE_DIR=$(readlink -f "$REPO_ROOT/.services")

export DEBIAN_FRONTEND=noninteractive

say() { printf '[services] %s\n' "$*" >&2; }
die() {
  printf '[services] ERROR: %s\n' "$*" >&2
  exit 1
}

# as_root CMD...: runs CMD as root (directly when we are root, else through sudo without a prompt).
as_root() {
  if ((EUID == 0)); then
    "$@"
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    sudo -n -E "$@"
  else
    die "need root to run: $*"
  fi
}

# apt_install PKG...: installs the Debian packages among PKG that are not installed yet.
# The package lists are refreshed once per run, and only when something must be installed.
APT_UPDATED=
apt_install() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  if [[ -z $APT_UPDATED ]]; then
    say "apt-get update"
    as_root apt-get -o DPkg::Lock::Timeout=120 -qq update </dev/null >/dev/null ||
      die "apt-get update failed"
    APT_UPDATED=1
  fi
  say "apt-get install ${missing[*]}"
  as_root apt-get -o DPkg::Lock::Timeout=120 -qq -y --no-install-recommends install "${missing[@]}" \
    </dev/null >/dev/null || die "apt-get install ${missing[*]} failed"
}

# port_open PORT: true when something accepts TCP connections on 127.0.0.1:PORT.
port_open() { timeout 2 bash -c "</dev/tcp/127.0.0.1/$1" 2>/dev/null; }

# port_owner PORT: describes the process listening on PORT, for error messages.
port_owner() {
  local line
  line=$(ss -Hltnp "sport = :$1" 2>/dev/null | head -n 1) || true
  printf '%s' "${line:-unknown process}"
}

# running_pid PIDFILE PATTERN: prints the pid written in PIDFILE when that process is alive and
# its command line contains PATTERN (so that a pid reused by another program is not ours).
running_pid() {
  local pid
  [[ -s $1 ]] || return 1
  pid=$(head -n 1 "$1")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline" | grep -qF -- "$2" || return 1
  printf '%s\n' "$pid"
}

# find_pid PATTERN: prints the pid of the oldest process whose command line contains PATTERN
# (a fixed string), for a daemon whose pid file was lost, e.g. when .services was removed
# while it ran.
find_pid() {
  local f pid
  for f in /proc/[0-9]*/cmdline; do
    pid=${f#/proc/}
    pid=${pid%/cmdline}
    ((pid == $$ || pid == BASHPID)) && continue
    tr '\0' ' ' 2>/dev/null <"$f" | grep -qF -- "$1" || continue
    printf '%s\n' "$pid"
  done | sort -n | head -n 1 | grep .
}

# alive PID: true while PID runs (a zombie counts as gone).
alive() {
  local state
  state=$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n $state && $state != Z ]]
}

# stop_pid PID NAME SECONDS [SIGNAL]: SIGNAL (default TERM), then SIGKILL if PID still runs
# after SECONDS.
stop_pid() {
  local pid=$1 name=$2 secs=$3 sig=${4:-TERM} i
  alive "$pid" || return 0
  say "stopping $name (pid $pid)"
  kill -"$sig" "$pid" 2>/dev/null || true
  for ((i = 0; i < secs * 5; i++)); do
    alive "$pid" || return 0
    sleep 0.2
  done
  say "$name did not stop within ${secs}s: killing it"
  kill -KILL "$pid" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    alive "$pid" || return 0
    sleep 0.2
  done
  die "$name (pid $pid) survived SIGKILL"
}

# show_tail FILE...: prints the end of each log FILE that exists, for failure reports.
show_tail() {
  local f
  for f in "$@"; do
    [[ -s $f ]] || continue
    printf -- '----- last lines of %s -----\n' "$f" >&2
    tail -n 40 "$f" >&2
  done
}

# close_inherited_fds: closes every open file above stderr. Scripts that start daemons which
# outlive them call it first: a daemon must not inherit, and hold until it stops, what the
# caller had open, above all the lock of `flock /tmp/it.lock go test …`.
close_inherited_fds() {
  local fd
  for fd in /proc/$$/fd/*; do
    fd=${fd##*/}
    ((fd > 2)) && eval "exec $fd>&-" 2>/dev/null
  done
  return 0
}

# lock_state_dir: serialises concurrent up.sh/down.sh runs of one checkout.
# Daemons started while holding it must be launched with `9>&-` so they do not inherit the lock.
lock_state_dir() {
  mkdir -p "$STATE_DIR"
  exec 9>"$STATE_DIR/.lock"
  flock -w 600 9 || die "another up.sh/down.sh holds $STATE_DIR/.lock"
}

# server_home NAME OWNER RUN_AS STOP_DIR [create]: prints the folder of the
# database server NAME, choosing (and creating) it on first use. It is
# $STATE_DIR/NAME when OWNER (through the RUN_AS function) can reach it and a
# unix socket under it fits in 107 bytes; otherwise
# /var/lib/tributary/<hash of the checkout>/NAME, linked from $STATE_DIR/NAME.
server_home() {
  local name=$1 owner=$2 run_as=$3 stop_dir=$4 mode=${5:-}
  local link=$STATE_DIR/$name
  if [[ -L $link ]]; then
    readlink -f "$link"
    return 0
  fi
  if [[ -d $link ]]; then
    printf '%s\n' "$link"
    return 0
  fi
  [[ $mode == create ]] || return 1

  if ((${#link} <= 80)) && "$run_as" test -x "$STATE_DIR"; then
    mkdir -p "$link"
    chown "$owner": "$link"
    printf '%s\n' "$link"
    return 0
  fi
  local home
  home=/var/lib/tributary/$(printf '%s' "$REPO_ROOT" | sha256sum | cut -c 1-16)/$name
  # The link was removed with .services, so whatever was kept for this checkout is reset.
  if [[ -e $home ]]; then
    "$stop_dir" "$home" || true
    rm -rf "$home"
  fi
  mkdir -p "$home"
  chmod 755 "$(dirname "$home")" /var/lib/tributary
  chown "$owner": "$home"
  ln -s "$home" "$link"
  printf '%s\n' "$REPO_ROOT" >"$(dirname "$home")/checkout"
  say "$name: $STATE_DIR is out of reach of the $owner user; server kept in $home"
  printf '%s\n' "$home"
}
