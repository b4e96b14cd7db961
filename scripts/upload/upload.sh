#!/usr/bin/env bash
# Uploads one file through Custody's upload lane with nothing but curl, jq,
# openssl and split (docs/contracts.md §5; README "Uploading a file"):
#
#   MCP=http://127.0.0.1:8080/mcp scripts/upload/upload.sh KEY GRANT_TOKEN CASE_ID FILE
#
# 1. hash the file (SHA-256, hex) and each 16 MiB part (SHA-256, base64);
# 2. begin_upload_session: one presigned URL per part;
# 3. PUT each part to its URL with exactly the headers it came with;
# 4. complete_upload: the server verifies the whole file, then spends the grant;
# 5. get_upload_status.
set -euo pipefail
if [ $# -ne 4 ]; then
  echo "usage: MCP=http://127.0.0.1:8080/mcp $0 KEY GRANT_TOKEN CASE_ID FILE" >&2
  exit 2
fi
MCP=${MCP:-http://127.0.0.1:8080/mcp}
KEY=$1 GRANT=$2 CASE=$3 FILE=$4
PART_SIZE=16777216
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

H=(-H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream')
SID=$(curl -s -D - -o /dev/null "$MCP" "${H[@]}" \
  -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"upload.sh","version":"1"}}}' \
  | tr -d '\r' | awk -F': ' 'tolower($1)=="mcp-session-id"{print $2}')
[ -n "$SID" ] || { echo "no session: is the server at $MCP running, and is KEY a key of it?" >&2; exit 1; }
H+=(-H "Mcp-Session-Id: $SID" -H 'MCP-Protocol-Version: 2025-11-25')
curl -s "$MCP" "${H[@]}" -d '{"jsonrpc":"2.0","method":"notifications/initialized"}' >/dev/null
call() { # call ID TOOL ARGUMENTS_JSON
  curl -s "$MCP" "${H[@]}" -d "{\"jsonrpc\":\"2.0\",\"id\":$1,\"method\":\"tools/call\",\"params\":{\"name\":\"$2\",\"arguments\":$3}}"
}

# 1. Hash: the whole file in hex, each part in base64.
SIZE=$(wc -c < "$FILE" | tr -d ' ')
SHA=$(openssl dgst -sha256 -r "$FILE" | cut -d' ' -f1)
split -b "$PART_SIZE" -d -a 2 "$FILE" "$WORK/part."
PARTS=$(for p in "$WORK"/part.*; do openssl dgst -sha256 -binary "$p" | base64; done | jq -R . | jq -sc .)

# 2. Begin.
ARGS=$(jq -nc --arg g "$GRANT" --arg c "$CASE" --arg f "$(basename "$FILE")" --argjson s "$SIZE" \
  --arg h "$SHA" --argjson p "$PARTS" '{grant_token:$g, case_id:$c, filename:$f, size_bytes:$s, sha256:$h, part_sha256:$p}')
BEGUN=$(call 2 begin_upload_session "$ARGS")
echo "$BEGUN" | jq -c '.result.structuredContent | {status, upload_id: .data.upload_id, parts: (.data.parts // [] | length), expires_at: .data.expires_at, error}'
[ "$(echo "$BEGUN" | jq -r .result.structuredContent.status)" = executed ] || exit 1
UPLOAD=$(echo "$BEGUN" | jq -r .result.structuredContent.data.upload_id)

# 3. PUT each part with exactly its headers.
i=0
for p in "$WORK"/part.*; do
  URL=$(echo "$BEGUN" | jq -r ".result.structuredContent.data.parts[$i].url")
  HDRS=()
  while IFS= read -r h; do HDRS+=(-H "$h"); done \
    < <(echo "$BEGUN" | jq -r ".result.structuredContent.data.parts[$i].headers | to_entries[] | \"\(.key): \(.value)\"")
  curl -s -o /dev/null -w "part $((i + 1)): %{http_code}\n" -X PUT "${HDRS[@]}" --data-binary @"$p" "$URL"
  i=$((i + 1))
done

# 4. Complete, then 5. the status.
call 3 complete_upload "{\"grant_token\":\"$GRANT\",\"upload_id\":\"$UPLOAD\"}" \
  | jq -c '.result.structuredContent | {status, state: .data.state, spent: .data.spent, error}'
call 4 get_upload_status "{\"upload_id\":\"$UPLOAD\"}" \
  | jq -c '.result.structuredContent | {upload_id, state, spent, scanner_posture}'
