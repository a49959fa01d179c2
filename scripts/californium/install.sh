#!/usr/bin/env bash
# Builds coaplab's Californium peer (scripts/californium/CfLab.java) into .peers/californium
# (git-ignored): the jars of pom.xml from Maven Central (`mvn dependency:copy-dependencies`,
# cached in ~/.m2), the harness compiled with javac against them, and the launcher
# .peers/californium/cf. Does nothing when the launcher is there and pom.xml and CfLab.java
# are unchanged since it was built (a stamp of their hashes). Needs java, javac (17+) and mvn;
# scripts/test.sh installs them when missing. Exit 1 when the build fails.
#
#   scripts/californium/install.sh [DEST]     (default: .peers/californium)
set -euo pipefail
src="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$src/../.." && pwd)"
dest="${1:-$root/.peers/californium}"
stamp="$(cat "$src/pom.xml" "$src/CfLab.java" | sha256sum | cut -d' ' -f1)"
if [ -x "$dest/cf" ] && [ "$(cat "$dest/stamp" 2>/dev/null)" = "$stamp" ]; then
  exit 0
fi
for tool in java javac mvn; do
  command -v "$tool" >/dev/null || { echo "install.sh: $tool not found" >&2; exit 1; }
done
rm -rf "$dest"
mkdir -p "$dest/lib" "$dest/classes"
# The pom has packaging "pom": Maven builds nothing, it only resolves and copies the jars.
mvn -B -q -Dstyle.color=never -f "$src/pom.xml" dependency:copy-dependencies \
  -DoutputDirectory="$dest/lib" -DincludeScope=runtime 2>&1 | sed "s/\x1b\[[0-9;]*m//g"
javac -encoding UTF-8 -d "$dest/classes" -cp "$dest/lib/*" "$src/CfLab.java"
cat >"$dest/cf" <<'LAUNCHER'
#!/bin/sh
# coaplab's Californium peer (scripts/californium/CfLab.java); built by
# scripts/californium/install.sh. CF_JAVA_OPTS adds JVM options.
d="$(dirname "$0")"
# C1 only and the serial collector: a short-lived client starts faster on two cores.
exec java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC $CF_JAVA_OPTS -cp "$d/classes:$d/lib/*" CfLab "$@"
LAUNCHER
chmod +x "$dest/cf"
grep -o '<cf.version>[^<]*' "$src/pom.xml" | cut -d'>' -f2 >"$dest/version"
echo "$stamp" >"$dest/stamp"
echo "californium $(cat "$dest/version") peer built in $dest"
