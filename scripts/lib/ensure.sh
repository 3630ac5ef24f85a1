# SPDX-License-Identifier: MIT
# Sourced by the measuring scripts (peers.sh, proxy_load.sh): installs the
# Debian packages a part of the run needs, only those missing.
#
#   ensure GROUP PACKAGE...   installs the missing packages with apt-get
#                             (apt-get update once first); non-zero on
#                             failure, with the reason in $ensure_why
#
# The caller defines log MESSAGE (to stderr) and sets ensure_log_dir (where
# apt-get's output goes) and ensure_no_install (a reason, non-empty: install
# nothing).
as_root=()
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then as_root=(sudo); fi
apt_updated=0
ensure_why=""
ensure() {
  local group=$1; shift
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]} == 0)) && return 0
  if [ -n "${ensure_no_install:-}" ]; then
    ensure_why="missing ${missing[*]} ($ensure_no_install)"; log "$group: $ensure_why"; return 1
  fi
  if [ "$(id -u)" -ne 0 ] && ((${#as_root[@]} == 0)); then
    ensure_why="missing ${missing[*]} and not root (no sudo)"; log "$group: $ensure_why"; return 1
  fi
  if ((apt_updated == 0)); then
    log "apt-get update"
    "${as_root[@]}" apt-get update >"$ensure_log_dir/apt-update.log" 2>&1 ||
      log "apt-get update failed (see $ensure_log_dir/apt-update.log)"
    apt_updated=1
  fi
  log "$group: installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y --no-install-recommends \
    "${missing[@]}" >"$ensure_log_dir/apt-$group.log" 2>&1 || {
    ensure_why="apt-get install ${missing[*]} failed (see $ensure_log_dir/apt-$group.log)"
    log "$group: $ensure_why"; return 1; }
}
