#!/bin/sh
# Turn standard input into a C file defining `const char NAME[]` with its
# text, for files the command serves (the OpenAPI description).
set -eu
name=$1
printf '/* Generated from a file of the source tree by scripts/embed.sh. */\n'
printf 'extern const char %s[];\n' "$name"
printf 'const char %s[] =\n' "$name"
sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/\t"/' -e 's/$/\\n"/'
printf ';\n'
