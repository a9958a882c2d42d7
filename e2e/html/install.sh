#!/usr/bin/env bash
# install.sh installs the npm dependencies of the HTML matrix browser check (playwright-core, at
# the version pinned in package.json and package-lock.json) into e2e/html/node_modules, an
# ignored folder. It reaches nothing but the npm registry and downloads no browser:
# check-matrix.mjs drives Debian's /usr/bin/chromium (apt-get install -y chromium).
# Running it again does nothing when the pinned version is already installed.
#
#   e2e/html/install.sh && ACPPROBE_E2E=1 go test ./e2e/ -run TestMatrixHTML -v
set -euo pipefail

dir=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)
cd "$dir"

for tool in node npm; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "e2e/html/install.sh: $tool is not on PATH; install Node.js (with npm) first" >&2
		exit 1
	fi
done

want=$(node -e 'process.stdout.write(require("./package.json").dependencies["playwright-core"])')
have=$(node -e 'try { process.stdout.write(require("./node_modules/playwright-core/package.json").version) } catch (e) {}')
if [[ "$have" == "$want" ]]; then
	echo "e2e/html/install.sh: playwright-core@$want already installed"
else
	echo "e2e/html/install.sh: installing playwright-core@$want (installed: ${have:-none})"
	# No browser download: playwright-core has no install script, and the check uses Debian's
	# chromium.
	PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --ignore-scripts
fi

if [[ ! -x /usr/bin/chromium ]]; then
	echo "e2e/html/install.sh: note: /usr/bin/chromium is missing; the check needs Debian's chromium package (apt-get install -y chromium)" >&2
fi
