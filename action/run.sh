#!/usr/bin/env bash
# Runs kpipe for the Action: on a pull request, `kpipe diff --format
# markdown` between the pull request's base and its head, written to
# $KPIPE_BODY_FILE (with a marker line that comment.sh finds again) and to
# the job summary; on any other event, `kpipe build-all` (does every root
# still build?). Inputs (environment):
#   KPIPE_COMMAND        diff, build-all, or auto (diff on pull requests)
#   KPIPE_PATHS          paths to compare or build, space-separated (default: the repository)
#   KPIPE_ALL            "true": --all-kustomizations
#   KPIPE_BASE           the base revision (default: the pull request's base commit)
#   KPIPE_REMOTE_CACHE   a shared cache URL (read-only unless KPIPE_REMOTE_WRITE is true)
#   KPIPE_REMOTE_WRITE   "true" | "false" | "auto" (auto: write on a push to the default branch)
#   KPIPE_EXTRA_ARGS     more flags, space-separated
#   KPIPE_BODY_FILE      where the comment body goes (default $RUNNER_TEMP/kpipe-diff.md)
# Outputs (to $GITHUB_OUTPUT when set): changed=true|false, body-file=PATH.
# Exit status: 0 unless kpipe reported trouble or a root failed to build.
set -euo pipefail

event=${GITHUB_EVENT_NAME:-}
command=${KPIPE_COMMAND:-auto}
if [ "$command" = auto ]; then
  case "$event" in
    pull_request|pull_request_target) command="diff" ;;
    *) command="build-all" ;;
  esac
fi

args=()
[ "${KPIPE_ALL:-false}" = true ] && args+=(--all-kustomizations)
if [ -n "${KPIPE_REMOTE_CACHE:-}" ]; then
  args+=(--remote-cache "$KPIPE_REMOTE_CACHE")
  write=${KPIPE_REMOTE_WRITE:-auto}
  if [ "$write" = auto ]; then
    write=false
    default_ref="refs/heads/${KPIPE_DEFAULT_BRANCH:-main}"
    if [ "$event" = push ] && [ "${GITHUB_REF:-}" = "$default_ref" ]; then
      write=true
    fi
  fi
  [ "$write" = true ] && args+=(--remote-cache-write)
fi
# shellcheck disable=SC2206 # word splitting is the point: space-separated inputs
extra=(${KPIPE_EXTRA_ARGS:-})
# shellcheck disable=SC2206
paths=(${KPIPE_PATHS:-})

output() {
  if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "$1=$2" >>"$GITHUB_OUTPUT"; fi
}

case "$command" in
  build-all)
    set +e
    kpipe build-all "${paths[@]}" "${args[@]}" "${extra[@]}"
    code=$?
    set -e
    output changed false
    exit "$code"
    ;;
  diff) ;;
  *) echo "kpipe action: command must be diff, build-all or auto, not '$command'" >&2; exit 2 ;;
esac

base=${KPIPE_BASE:-}
if [ -z "$base" ] && [ -n "${GITHUB_EVENT_PATH:-}" ] && [ -f "$GITHUB_EVENT_PATH" ]; then
  base=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pull_request"]["base"]["sha"])' "$GITHUB_EVENT_PATH" 2>/dev/null || true)
fi
if [ -z "$base" ]; then
  echo "kpipe action: no base revision (set the base input, or run on a pull request)" >&2
  exit 2
fi
# A shallow checkout may lack the base commit: fetch just that commit.
if ! git cat-file -e "$base^{commit}" 2>/dev/null; then
  git fetch --no-tags --depth=1 origin "$base"
fi

body=${KPIPE_BODY_FILE:-${RUNNER_TEMP:-/tmp}/kpipe-diff.md}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
set +e
kpipe diff --format markdown --base "$base" --head HEAD "${args[@]}" "${extra[@]}" -- "${paths[@]}" >"$out"
code=$?
set -e
if [ "$code" -ge 2 ]; then
  echo "kpipe action: kpipe diff failed (exit $code)" >&2
  exit "$code"
fi
{
  echo "<!-- kpipe-diff -->"
  cat "$out"
} >"$body"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  cat "$body" >>"$GITHUB_STEP_SUMMARY"
fi
if [ "$code" = 1 ]; then output changed true; else output changed false; fi
output body-file "$body"
