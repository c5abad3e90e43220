#!/bin/sh
# Checks which symbols a linked program holds, so that a dependency kept out of a program on
# purpose cannot creep back in through a library.
#   binary_symbols_test.sh NM BINARY PATTERN absent|present
# Looks at the static and the dynamic symbol tables (defined and undefined symbols alike), so
# both a statically linked and a shared library are caught. Exit 0 when the expectation holds.
set -u
nm_tool=$1 binary=$2 pattern=$3 expect=$4
if [ ! -f "$binary" ]; then echo "no such binary: $binary"; exit 2; fi
symbols=$( { "$nm_tool" "$binary" 2>/dev/null; "$nm_tool" -D "$binary" 2>/dev/null; } )
if [ -z "$symbols" ]; then echo "$nm_tool listed no symbols of $binary"; exit 2; fi
matches=$(printf '%s\n' "$symbols" | grep -E "$pattern" | sort -u)
count=$(printf '%s' "$matches" | grep -c . || true)
case $expect in
  absent)
    if [ "$count" -ne 0 ]; then
      echo "$binary holds $count symbol(s) matching '$pattern', for example:"
      printf '%s\n' "$matches" | head -5
      exit 1
    fi ;;
  present)
    if [ "$count" -eq 0 ]; then echo "$binary holds no symbol matching '$pattern'"; exit 1; fi ;;
  *) echo "expectation must be absent or present, not '$expect'"; exit 2 ;;
esac
echo "$binary: $count symbol(s) matching '$pattern' ($expect as expected)"
