#!/usr/bin/env bash
# Writes the body file as the pull request's kpipe comment: the comment
# that holds the marker line (<!-- kpipe-diff -->) is updated, else one is
# created; never a second one. Uses the GitHub REST API with curl.
# Inputs (environment):
#   GITHUB_TOKEN       a token that may write pull-request comments
#   GITHUB_API_URL     the API (set by GitHub Actions)
#   GITHUB_REPOSITORY  owner/name (set by GitHub Actions)
#   KPIPE_PR           the pull request's number (default: from $GITHUB_EVENT_PATH)
#   KPIPE_BODY_FILE    the body (run.sh writes it)
set -euo pipefail

: "${GITHUB_TOKEN:?GITHUB_TOKEN is required to comment}"
api=${GITHUB_API_URL:-https://api.github.com}
repo=${GITHUB_REPOSITORY:?GITHUB_REPOSITORY is required}
body=${KPIPE_BODY_FILE:?KPIPE_BODY_FILE is required}
pr=${KPIPE_PR:-}
if [ -z "$pr" ] && [ -n "${GITHUB_EVENT_PATH:-}" ]; then
  pr=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pull_request"]["number"])' "$GITHUB_EVENT_PATH")
fi
: "${pr:?not a pull request: no number to comment on}"
marker='<!-- kpipe-diff -->'

gh_api() { # METHOD PATH [JSON-BODY-FILE]
  local args=(--fail --silent --show-error --location -X "$1"
    -H "Authorization: Bearer $GITHUB_TOKEN" -H "Accept: application/vnd.github+json"
    -H "X-GitHub-Api-Version: 2022-11-28")
  [ $# -ge 3 ] && args+=(-H "Content-Type: application/json" --data-binary "@$3")
  curl "${args[@]}" "$api$2"
}

# The first comment holding the marker, over every page of comments.
existing=""
page=1
while [ -z "$existing" ]; do
  list=$(gh_api GET "/repos/$repo/issues/$pr/comments?per_page=100&page=$page")
  existing=$(printf '%s' "$list" | python3 -c '
import json, sys
for c in json.load(sys.stdin):
    if sys.argv[1] in (c.get("body") or ""):
        print(c["id"]); break' "$marker")
  n=$(printf '%s' "$list" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
  [ "$n" -lt 100 ] && break
  page=$((page + 1))
done

payload=$(mktemp)
trap 'rm -f "$payload"' EXIT
python3 -c 'import json,sys; json.dump({"body": open(sys.argv[1]).read()}, open(sys.argv[2], "w"))' "$body" "$payload"
if [ -n "$existing" ]; then
  gh_api PATCH "/repos/$repo/issues/comments/$existing" "$payload" >/dev/null
  echo "kpipe: updated comment $existing on #$pr"
else
  gh_api POST "/repos/$repo/issues/$pr/comments" "$payload" >/dev/null
  echo "kpipe: commented on #$pr"
fi
