#!/usr/bin/env bash
# Runs our existing tests against each library candidate of docs/decisions/less-by-hand.md: copies
# candidates/<file>.candidate over the module it would replace, runs the tests that pin that
# module's behaviour, puts the module back from git, and prints the failing test names.
#
#   bash bench/less-by-hand/try-candidates.sh            (from the repository root)
#
# It installs the candidates with `npm i --no-save` (a later `npm ci` removes them again) and
# refuses to start while a module it would overwrite has uncommitted changes.
set -euo pipefail
cd "$(dirname "$0")/../.."

# candidate file | module it replaces | tests that pin the module's behaviour
CANDIDATES=(
  "discord-client.ts.candidate|src/discord/client.ts|test/integration/stats/discord-rest.test.ts test/integration/commands/sources.test.ts"
  "json-position.jsonc-parser.ts.candidate|src/config/json-position.ts|test/unit/config test/integration/commands/sources.test.ts test/integration/cli/config-check.test.ts"
  "json-position.json-source-map.ts.candidate|src/config/json-position.ts|test/unit/config test/integration/commands/sources.test.ts test/integration/cli/config-check.test.ts"
  "lock.proper-lockfile.ts.candidate|src/store/lock.ts|test/unit/store test/integration/doctor/doctor.test.ts test/integration/cli/run-alive.test.ts test/integration/cli/votes.test.ts test/integration/agent/embedded-three-lines.test.ts"
  "atomic-json.write-file-atomic.ts.candidate|src/fs/atomic-json.ts|test/unit/api/oauth-token-store.test.ts test/unit/api/oauth-session.test.ts test/integration/client/oauth.test.ts test/integration/webhooks/receiver.test.ts test/integration/cli/webhooks.test.ts"
)

for entry in "${CANDIDATES[@]}"; do
  module="$(cut -d'|' -f2 <<<"$entry")"
  if ! git diff --quiet -- "$module"; then
    echo "refusing: $module has uncommitted changes" >&2
    exit 1
  fi
done

npm i --no-save --no-audit --no-fund @discordjs/rest@2.6.3 jsonc-parser@3.3.1 json-source-map@0.6.1 proper-lockfile@4.1.2 write-file-atomic@7.0.1 >/dev/null

for entry in "${CANDIDATES[@]}"; do
  IFS='|' read -r candidate module tests <<<"$entry"
  cp "bench/less-by-hand/candidates/$candidate" "$module"
  # shellcheck disable=SC2086
  npx vitest run $tests >"/tmp/less-by-hand-$candidate.log" 2>&1 || true
  git checkout -q -- "$module"
  echo "== $candidate (over $module)"
  sed 's/\x1b\[[0-9;]*m//g' "/tmp/less-by-hand-$candidate.log" | grep -E '^\s+×|^\s+Tests ' || true
done
