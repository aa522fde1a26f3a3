#!/usr/bin/env bash
# Fails when a source file under core/ names cuda, mps or nccl outside a comment: everything
# the host treats differently per device comes from the backend plugin's Capabilities.
set -euo pipefail
core=${1:?usage: core_names_no_device.sh CORE_FOLDER}
found=$(find "$core" -name '*.cpp' -o -name '*.h' | sort | while read -r f; do
  # Drop // comments, then look for the names as words of their own (force_mps counts).
  sed -e 's|//.*$||' "$f" | grep -niE '(^|[^a-z])(cuda|mps|nccl)([^a-z]|$)' | sed "s|^|$f:|" || true
done)
if [ -n "$found" ]; then
  echo "core/ names a device or collective library outside comments:"
  echo "$found"
  exit 1
fi
echo "core/ names no device or collective library outside comments"
