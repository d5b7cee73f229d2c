#!/usr/bin/env bash
# The image's runtime layer (wal-server's `image` build, Jib's extra directory), built without a daemon or a base image:
#   - a Java runtime made by jlink from the building JDK, with the modules Walden uses, at /opt/java;
#   - the shared libraries that runtime and Walden's native parts (Netty epoll, zstd, lz4) load, copied from the
#     building machine at their own paths (the dynamic loader included);
#   - the CA certificates Java trusts (for S3 over TLS), /etc/passwd with the walden user, /tmp, the data directory.
#   wal-server/src/image/runtime.sh OUT_DIR
set -euo pipefail
OUT="$1"
PATH="$PATH:/sbin:/usr/sbin" # ldconfig, for a user whose PATH has no sbin
JAVA_BIN="${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}/bin"
rm -rf "$OUT"
mkdir -p "$OUT/opt" "$OUT/etc" "$OUT/tmp" "$OUT/var/lib/walden"
# The modules of Walden's dependency tree (jdeps on walden.jar, plus the ones loaded by reflection or ServiceLoader:
# JMX for Micrometer's JVM meters, crypto for TLS, naming for Netty's DNS, net.http for the AWS SDK's client).
"$JAVA_BIN/jlink" --output "$OUT/opt/java" --strip-debug --no-man-pages --no-header-files \
  --add-modules java.base,java.logging,java.management,java.naming,java.net.http,java.scripting,java.sql,java.xml,java.desktop,jdk.unsupported,jdk.management,jdk.crypto.ec,jdk.crypto.cryptoki,jdk.zipfs,jdk.net,java.security.jgss,java.instrument,jdk.jfr,jdk.compiler
# Java's CA certificates: Debian's JDK points at /etc/ssl/certs/java/cacerts, which jlink does not follow.
if [ -f /etc/ssl/certs/java/cacerts ]; then
  rm -f "$OUT/opt/java/lib/security/cacerts"
  cp -L /etc/ssl/certs/java/cacerts "$OUT/opt/java/lib/security/cacerts"
fi
# Every shared library the runtime's binaries load, and what those load, at the same paths.
find "$OUT/opt/java" -type f \( -name '*.so' -o -perm -u+x \) -print0 | while IFS= read -r -d '' elf; do
  { ldd "$elf" 2>/dev/null || true; } | awk '/=> \// {print $3} /^[[:space:]]*\/[^ ]+ \(/ {print $1}'
done | sort -u | while read -r lib; do
  [ -e "$lib" ] || continue
  mkdir -p "$OUT$(dirname "$lib")"
  cp -L "$lib" "$OUT$lib"
done
# Native libraries the jars extract at run time need only libc, libm, libpthread, libdl, librt and libgcc_s (zstd);
# add what ldd did not already bring.
for lib in libpthread.so.0 libdl.so.2 libm.so.6 librt.so.1 libgcc_s.so.1 libstdc++.so.6 libresolv.so.2 libnss_files.so.2 libnss_dns.so.2; do
  # (awk reads to the end: an early exit would kill ldconfig with SIGPIPE, which pipefail turns into a failure)
  path=$(ldconfig -p | awk -v l="$lib" '$1 == l && /x86-64|x86_64|aarch64/ && !found {print $NF; found = 1}')
  if [ -n "$path" ] && [ -e "$path" ]; then
    mkdir -p "$OUT$(dirname "$path")"
    cp -L "$path" "$OUT$path"
  fi
done
printf 'root:x:0:0:root:/root:/sbin/nologin\nwalden:x:10001:10001:walden:/var/lib/walden:/sbin/nologin\n' > "$OUT/etc/passwd"
printf 'root:x:0:\nwalden:x:10001:\n' > "$OUT/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' > "$OUT/etc/nsswitch.conf"
