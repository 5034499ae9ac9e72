#!/usr/bin/env bash
# Installs a pinned kpipe release for the runner's platform, verified
# against the release's checksums.txt, into $KPIPE_INSTALL_DIR (added to
# $GITHUB_PATH when set). Inputs (environment):
#   KPIPE_VERSION       the release tag, for example v0.2.0 (required)
#   KPIPE_RELEASE_URL   where releases are downloaded from
#                       (default https://github.com/kpipe/kpipe/releases/download)
#   KPIPE_INSTALL_DIR   where the binary goes (default $RUNNER_TEMP/kpipe-bin)
#   KPIPE_OS, KPIPE_ARCH  override the platform (default: this machine's)
set -euo pipefail

version=${KPIPE_VERSION:?KPIPE_VERSION is required (a release tag such as v0.2.0)}
base=${KPIPE_RELEASE_URL:-https://github.com/kpipe/kpipe/releases/download}
dest=${KPIPE_INSTALL_DIR:-${RUNNER_TEMP:-/tmp}/kpipe-bin}

os=${KPIPE_OS:-$(uname -s | tr '[:upper:]' '[:lower:]')}
case "$os" in
  linux|darwin) ext=tar.gz ;;
  mingw*|msys*|cygwin*|windows) os=windows; ext=zip ;;
  *) echo "kpipe: no release for the OS '$os'" >&2; exit 1 ;;
esac
arch=${KPIPE_ARCH:-$(uname -m)}
case "$arch" in
  x86_64|amd64) arch=amd64 ;;
  aarch64|arm64) arch=arm64 ;;
  *) echo "kpipe: no release for the architecture '$arch'" >&2; exit 1 ;;
esac

archive="kpipe_v${version#v}_${os}_${arch}.${ext}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fetch() { curl --fail --silent --show-error --location --retry 3 -o "$work/$1" "$base/$version/$1"; }
fetch checksums.txt
fetch "$archive"

want=$(awk -v f="$archive" '$2 == f || $2 == "*" f { print $1 }' "$work/checksums.txt")
if [ -z "$want" ]; then
  echo "kpipe: $archive is not listed in $version's checksums.txt" >&2
  exit 1
fi
if command -v sha256sum >/dev/null 2>&1; then
  got=$(sha256sum "$work/$archive" | awk '{ print $1 }')
else
  got=$(shasum -a 256 "$work/$archive" | awk '{ print $1 }')
fi
if [ "$got" != "$want" ]; then
  echo "kpipe: $archive does not match checksums.txt (sha256 $got, listed $want): not installed" >&2
  exit 1
fi

mkdir -p "$dest"
case "$ext" in
  tar.gz) tar -xzf "$work/$archive" -C "$work" ;;
  zip) unzip -q -o "$work/$archive" -d "$work" ;;
esac
exe=
[ "$os" = windows ] && exe=.exe
install -m 0755 "$work/kpipe$exe" "$dest/kpipe$exe"
# kpipe-full, which kpipe hands runs over to (the remote cache, Go
# plugins, Flux HelmReleases, Argo CD ApplicationSets) and sends its
# downloads to, beside it (releases before it came have none).
if [ -f "$work/kpipe-full$exe" ]; then
  install -m 0755 "$work/kpipe-full$exe" "$dest/kpipe-full$exe"
fi
if [ -n "${GITHUB_PATH:-}" ]; then
  echo "$dest" >>"$GITHUB_PATH"
fi
echo "kpipe $version ($os/$arch, sha256 $got) installed in $dest"
