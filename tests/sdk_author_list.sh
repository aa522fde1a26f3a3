#!/usr/bin/env bash
# Fails when docs/plugins.md's "What a backend author must learn" list and the SDK's headers
# disagree: every name the list gives must be declared in sdk/include/plugtrain, every type that
# backend.h and collective.h declare must be on the list, and the counts the text states (nine
# types for a minimal backend, fourteen in all) must be the list's.
set -euo pipefail
root=${1:?usage: sdk_author_list.sh SOURCE_ROOT}
sdk="$root/sdk/include/plugtrain"
# The section, up to the next heading: its tables' first cells, each name in backticks.
section=$(sed -n '/^### What a backend author must learn/,/^## /p' "$root/docs/plugins.md")
[ -n "$section" ] || { echo "docs/plugins.md has no section 'What a backend author must learn'"; exit 1; }
names=$(printf '%s\n' "$section" | grep '^| `' | cut -d'|' -f2 | grep -o '`[A-Za-z_]*`' | tr -d '`')
declared() { grep -qE "^(class|struct|enum class) $1( |$)|^#define $1\(" "$sdk"/*.h; }
fail=0
types=0
for n in $names; do
  if ! declared "$n"; then echo "the list names $n, which sdk/include/plugtrain does not declare"; fail=1; fi
  case "$n" in PLUGTRAIN_*) ;; *) types=$((types + 1)) ;; esac
done
for h in backend collective; do
  for t in $(grep -oE "^(class|struct|enum class) [A-Za-z_]+" "$sdk/$h.h" | awk '{print $NF}'); do
    printf '%s\n' $names | grep -qx "$t" || { echo "$h.h declares $t, which the list leaves out"; fail=1; }
  done
done
[ "$types" -eq 14 ] || { echo "the list has $types types; its text says fourteen in all"; fail=1; }
minimal=$(printf '%s\n' "$section" | sed -n '1,/adds five/p' | grep '^| `' | cut -d'|' -f2 | grep -o '`[A-Z][a-z][A-Za-z]*`' | wc -l)
[ "$minimal" -eq 9 ] || { echo "the minimal backend's table has $minimal types; its text says nine"; fail=1; }
[ "$fail" -eq 0 ] && echo "docs/plugins.md's backend author list matches the headers: $types types ($minimal for a minimal backend)"
exit "$fail"
