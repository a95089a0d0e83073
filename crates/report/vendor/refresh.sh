#!/bin/sh
# Refreshes the charting library the HTML report inlines: installs what
# crates/report/web/package.json and package-lock.json pin (npm ci checks
# every tarball against the lock's integrity hashes) in a scratch folder,
# then writes here the two minified files without their source-map comment
# (a report must never ask the network for anything, not even a .map), their
# licences, and README.md with each file's SHA-256, which a unit test of the
# report crate checks. Only this script needs Node.js and npm; building the
# workspace does not.
#
# To move to a new version: edit web/package.json, run `npm install
# --package-lock-only` in web/ to update the lock, run this script, and
# commit web/package*.json with everything it wrote here.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
web=$here/../web
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT INT TERM

cp "$web/package.json" "$web/package-lock.json" "$scratch/"
(cd "$scratch" && npm ci --no-audit --no-fund --ignore-scripts --silent)
modules=$scratch/node_modules

# Copies $1 (under node_modules) to $2 here without the source-map comment
# lines, and without a final newline, byte for byte what the report has
# always inlined.
strip() {
    kept=$(grep -v '^//# sourceMappingURL=' "$modules/$1")
    printf '%s' "$kept" >"$here/$2"
}

version() {
    node -p "require('$modules/$1/package.json').version"
}

strip chart.js/dist/chart.umd.min.js chart.umd.min.js
strip chartjs-chart-error-bars/build/index.umd.min.js error-bars.umd.min.js
cp "$modules/chart.js/LICENSE.md" "$here/chart.js.LICENSE.md"
cp "$modules/chartjs-chart-error-bars/LICENSE" "$here/chartjs-chart-error-bars.LICENSE"
cp "$modules/@kurkle/color/LICENSE.md" "$here/kurkle-color.LICENSE.md"

chart=$(version chart.js)
bars=$(version chartjs-chart-error-bars)
# The colour library Chart.js bundles into its UMD file, as its banner says.
color=$(grep -o '@kurkle/color v[0-9.]*' "$here/chart.umd.min.js" | head -n 1 | sed 's/.* v//')
sum() {
    sha256sum "$here/$1" | cut -d ' ' -f 1
}

cat >"$here/README.md" <<EOF
# Vendored charting library

The HTML report is one self-contained file: \`crates/report/src/vendor.rs\`
inlines these two files into every report with \`include_str!\`, so building
netbench needs neither Node.js nor npm nor the network. They are the
minified UMD builds of the packages on the npm registry, unchanged except that
the \`//# sourceMappingURL=\` comment line is removed (the report must not ask
the network for a source map) and there is no final newline.

| file | npm package | version | path in the package | SHA-256 |
|---|---|---|---|---|
| \`chart.umd.min.js\` | [chart.js](https://www.npmjs.com/package/chart.js) | $chart | \`dist/chart.umd.min.js\` | \`$(sum chart.umd.min.js)\` |
| \`error-bars.umd.min.js\` | [chartjs-chart-error-bars](https://www.npmjs.com/package/chartjs-chart-error-bars) | $bars | \`build/index.umd.min.js\` | \`$(sum error-bars.umd.min.js)\` |

Licences (all MIT): \`chart.js.LICENSE.md\` for Chart.js,
\`chartjs-chart-error-bars.LICENSE\` for the error-bars plugin, and
\`kurkle-color.LICENSE.md\` for @kurkle/color, which Chart.js bundles into its
UMD file (v$color, as the file's banner says; the licence text is the one of
the @kurkle/color the lock installs).

The versions and the npm registry's integrity hashes are pinned by
\`crates/report/web/package.json\` and \`package-lock.json\`. \`refresh.sh\`
(needs Node.js and npm) installs exactly those with \`npm ci\` in a scratch
folder and rewrites the two files, the licences and this README with its
checksums; \`cargo test -p netbench-report\` fails if a file no longer matches
its checksum here. To move to a new version, edit \`web/package.json\`, run
\`npm install --package-lock-only\` in \`crates/report/web\`, then
\`crates/report/vendor/refresh.sh\`, and commit both folders.
EOF

echo "refreshed $here: chart.js $chart, chartjs-chart-error-bars $bars"
