# SPDX-License-Identifier: MIT
# Sourced by the scripts that build Rust code (peers.sh, proxy_load.sh):
#
#   cargo_offline_home DIR   makes DIR a CARGO_HOME whose registry is
#                            Debian's crate sources (librust-*-dev, under
#                            /usr/share/cargo/registry), offline: nothing
#                            is downloaded
cargo_offline_home() {
  mkdir -p "$1"
  cat >"$1/config.toml" <<'TOML'
[source.crates-io]
replace-with = "debian"

[source.debian]
directory = "/usr/share/cargo/registry"

[net]
offline = true
TOML
}
