#!/usr/bin/env bash
# Rebuild codemirror.min.js from npm (needs node and the npm registry; the site never does this
# at run time). Pinned versions: change them here, rebuild, and commit the output.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
echo '{"name": "graphdojo-codemirror", "private": true}' > package.json
npm install --no-audit --no-fund --save-exact \
  codemirror@6.0.2 @codemirror/view@6.44.2 @codemirror/state@6.7.6 @codemirror/commands@6.11.2 \
  @codemirror/language@6.13.1 @codemirror/lang-python@6.2.1 @codemirror/lint@6.9.8 @lezer/highlight@1.2.5 \
  esbuild@0.25.0 >/dev/null
cp "$here/entry.js" .
node_modules/.bin/esbuild entry.js --bundle --minify --format=iife --global-name=CM \
  --legal-comments=none --target=es2020 --outfile="$here/codemirror.min.js"
# One licence file for everything inside the bundle (all MIT).
: > "$here/LICENSE"
for dir in node_modules/codemirror node_modules/@codemirror/* node_modules/@lezer/* node_modules/@marijn/* \
    node_modules/crelt node_modules/style-mod node_modules/w3c-keyname; do
  license="$(ls "$dir"/LICENSE* 2>/dev/null | head -1)"
  [ -n "$license" ] || { echo "no licence file in $dir" >&2; exit 1; }
  printf '==== %s\n' "$(node -p "const p = require('./$dir/package.json'); p.name + ' ' + p.version + ' (' + p.license + ')'")" >> "$here/LICENSE"
  cat "$license" >> "$here/LICENSE"
  echo >> "$here/LICENSE"
done
npm ls --all --parseable --long 2>/dev/null | sed -n 's|.*node_modules/||p' | grep -v esbuild | cut -d: -f2 | sort > "$here/VERSION"
