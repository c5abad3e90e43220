#!/usr/bin/env bash
# Release check: the README's two commands on a brand-new Debian 12 machine.
#
# Builds a minimal Debian 12 root with debootstrap in a scratch folder, clones the checkout's
# HEAD into it (committed work only, as a user would get it) and runs the README's first two
# ```sh blocks exactly as written, inside the root (chroot with /proc, /sys with its cgroups and
# /dev mounted).
# Then it installs tuned into a prefix, moves the build tree away and compiles, links and runs
# a tuned kernel from the installed prefix alone. Last, it builds the Debian package (cpack) and
# installs it with apt in a second brand-new root, runs a server, a worker and a 16-trial task
# from /usr/bin, and purges it again, leaving no file behind. Prints each step's wall time;
# exits non-zero when any step fails. Downloaded .deb files are cached between runs.
#
#   scripts/fresh-machine-check.sh [--no-baselines] [--work DIR] [--keep]
#     --no-baselines  afterwards remove the OpenBLAS and oneDNN development packages and run
#                     the test command again (TUNED_BASELINES=0) in a fresh build folder: the
#                     product and its tests must build and pass without them
#     --work DIR      scratch folder (default /var/tmp/tuned-fresh-machine); DIR/debs is the cache
#     --keep          leave the root in place after the check (it is replaced by the next run)
#
# Needs root (debootstrap, chroot, mount). Not part of the test suite: it takes minutes.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
work=/var/tmp/tuned-fresh-machine
no_baselines=0
keep=0
while (($#)); do
  case $1 in
    --no-baselines) no_baselines=1 ;;
    --work) work=$2; shift ;;
    --keep) keep=1 ;;
    *) echo "fresh-machine-check: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
[ "$(id -u)" -eq 0 ] || { echo "fresh-machine-check: must run as root (debootstrap, chroot, mount)" >&2; exit 2; }
work=$(realpath -m "$work")
commit=$(git -C "$repo" rev-parse --short HEAD)  # what the clone below gets
root=$work/root
deb_root=$work/root-deb  # the .deb's own fresh machine
cache=$work/debs
mkdir -p "$work" "$cache"

command -v debootstrap >/dev/null || {
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
}

# The README's commands: the first two ```sh blocks, verbatim.
readme_block() {
  awk -v want="$1" '/^```sh$/ {n++; inside = (n == want); next} /^```$/ {inside = 0} inside' "$repo/README.md"
}
setup_cmd=$(readme_block 1)
test_cmd=$(readme_block 2)
[ -n "$setup_cmd" ] && [ -n "$test_cmd" ] || { echo "fresh-machine-check: README.md lacks two \`\`\`sh blocks" >&2; exit 1; }

# The same mirror this machine uses (the first URIs line of its apt sources).
mirror=$(grep -hm1 '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' || true)
mirror=${mirror:-http://deb.debian.org/debian}

# Everything mounted under a root (default: $root), deepest first (also what a killed earlier
# run left).
unmount_root() {
  local target
  awk -v r="${1:-$root}/" 'index($2 "/", r) == 1 {print $2}' /proc/mounts | sort -r |
    while read -r target; do umount -l "$target" 2>/dev/null || true; done
}
remove_root() {
  unmount_root "${1:-$root}"
  [ -d "${1:-$root}" ] && rm -rf --one-file-system "${1:-$root}"
  return 0
}
cleanup() {
  unmount_root "$root"
  unmount_root "$deb_root"
  ((keep)) || { remove_root "$root"; remove_root "$deb_root"; }
}
trap cleanup EXIT
mount_in_root() {  # mount_in_root SOURCE TARGET [mount options...]
  mkdir -p "$root$2"
  mount "${@:3}" "$1" "$root$2"
}

declare -A seconds
step() {  # step NAME COMMAND...: runs and times one step; stops the check when it fails
  local name=$1 start end rc=0
  shift
  echo "== $name"
  start=$(date +%s.%N)
  "$@" || rc=$?
  end=$(date +%s.%N)
  seconds[$name]=$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.0f", b - a}')
  if ((rc != 0)); then
    echo "fresh-machine-check: FAILED: $name (exit $rc after ${seconds[$name]} s)" >&2
    exit 1
  fi
  echo "== $name: ${seconds[$name]} s"
}

in_root() {  # in_root SCRIPT: bash -c SCRIPT in the checkout inside the root, clean environment
  chroot "$root" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    bash -euo pipefail -c "cd ${2:-/root/tuned} && $1"
}

make_root() {
  make_bare_root
  # A user's clone has git; the minimal root has none, so clone from outside.
  git clone --quiet --no-local "$repo" "$root/root/tuned"
}

make_bare_root() {  # a minimal Debian 12 at $root with this machine's sources, mounts in place
  remove_root
  debootstrap --variant=minbase --cache-dir="$cache" bookworm "$root" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log" >&2; return 1; }
  # What a freshly installed machine has: this machine's apt sources and name resolution.
  cp /etc/apt/sources.list.d/*.sources "$root/etc/apt/sources.list.d/" 2>/dev/null || true
  [ -f /etc/apt/sources.list ] && cp /etc/apt/sources.list "$root/etc/apt/"
  cp -L /etc/resolv.conf "$root/etc/resolv.conf"
  cp -L /etc/hosts "$root/etc/hosts"  # the machine's own name, as an installed system lists it
  # Where this machine's network re-signs TLS (PIP_CERT names the bundle that trusts it), a
  # machine installed on the same network trusts the same: pip in the root reads that bundle,
  # so scripts/test.sh can install onnxruntime there too.
  if [ -n "${PIP_CERT:-}" ] && [ -f "$PIP_CERT" ]; then
    cp -L "$PIP_CERT" "$root/etc/network-ca-bundle.crt"
    printf '[global]\ncert = /etc/network-ca-bundle.crt\n' >"$root/etc/pip.conf"
  fi
  mount_in_root proc /proc -t proc
  # The machine's /sys with what is mounted under it: an installed system has its cgroup
  # hierarchy at /sys/fs/cgroup (slurmd will not start without it), a bare sysfs has none.
  mount_in_root /sys /sys --rbind
  mount --make-rslave "$root/sys"  # so unmounting the root's copy never reaches the machine's
  mount_in_root /dev /dev --bind
  mount_in_root devpts /dev/pts -t devpts
  mount_in_root "$cache" /var/cache/apt/archives --bind
}

installed_prefix_works() {
  in_root '
    cmake --install build --prefix /opt/tuned >/dev/null
    mv build /root/build.away
    trap "mv /root/build.away build" EXIT
    work=$(mktemp -d)
    /opt/tuned/bin/tuned tune --workload "matmul(M=64,N=48,K=32)" --trials 8 --db "$work/t.db" >/dev/null
    /opt/tuned/bin/tuned compile --workload "matmul(M=64,N=48,K=32)" --db "$work/t.db" -o "$work/so/matmul.so"
    /opt/tuned/bin/tuned compile --workload "matmul(M=64,N=48,K=32)" --db "$work/t.db" -o "$work/obj/matmul.o"
    for kernel in "$work/so/matmul.so" "$work/obj/matmul.o"; do
      cmake -S examples/c_matmul -B "$kernel.build" -DCMAKE_PREFIX_PATH=/opt/tuned -DTUNED_KERNEL="$kernel" >/dev/null
      cmake --build "$kernel.build" >/dev/null
      "$kernel.build/c_matmul"
    done'
}

without_baselines() {
  in_root '
    # libopenblas-dev is a metapackage: the headers and library links come from libopenblas*-dev.
    dev=$(dpkg-query -W -f="\${Package} \${Status}\n" "libopenblas*-dev" libdnnl-dev 2>/dev/null |
          awk "/install ok installed/ {print \$1}")
    DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq $dev >/dev/null
    if dpkg-query -W -f="\${Package} \${Status}\n" "libopenblas*-dev" libdnnl-dev 2>/dev/null | grep -q "install ok installed"; then
      echo "baseline development packages are still installed" >&2; exit 1
    fi
    TUNED_BASELINES=0 BUILD_DIR=build-no-baselines bash scripts/test.sh 2>&1 | tee /root/no-baselines.log | tail -3
    grep -q "OpenBLAS not found" /root/no-baselines.log
    grep -q "oneDNN not found" /root/no-baselines.log'
}

build_deb() {
  in_root 'cpack --config build/CPackConfig.cmake -B /root/deb >/dev/null && ls /root/deb/tuned_*_amd64.deb'
  cp "$root"/root/deb/tuned_*_amd64.deb "$work/"
}

# The package on a machine that never built anything: apt resolves its Depends from the mirror.
deb_installs_and_purges() {
  local deb
  deb=$(basename "$(ls "$work"/tuned_*_amd64.deb)")
  root=$deb_root make_bare_root
  cp "$work/$deb" "$deb_root/root/"
  root=$deb_root in_root "
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ./$deb >/dev/null
    test -x /usr/bin/tuned && test -x /usr/bin/tuned-worker
    test -f /usr/lib/systemd/system/tuned-serve.service && test -f /usr/include/tuned/compiler.h
    work=\$(mktemp -d)
    (umask 077; echo smoke-token > \$work/token)
    tuned serve --listen 127.0.0.1:0 --port-file \$work/port --db \$work/t.db --token-file \$work/token >\$work/serve.log 2>&1 &
    serve=\$!
    for _ in \$(seq 100); do [ -s \$work/port ] && break; sleep 0.1; done
    port=\$(cat \$work/port)
    tuned-worker --server 127.0.0.1:\$port --token-file \$work/token >\$work/worker.log 2>&1 &
    worker=\$!
    tuned tune --server 127.0.0.1:\$port --token-file \$work/token --workload 'matmul(M=64,N=64,K=64)' --trials 16 --json >\$work/tune.json
    grep -q '\"trials_done\": 16' \$work/tune.json
    kill \$worker \$serve; wait \$worker \$serve || true
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq tuned >/dev/null
    ! dpkg-query -W -f='\${Status}' tuned 2>/dev/null | grep -q 'install ok installed'
    test ! -e /usr/bin/tuned && test ! -e /usr/lib/systemd/system/tuned-serve.service
    test ! -e /usr/share/doc/tuned && test ! -e /usr/include/tuned && test ! -e /usr/lib/cmake/tuned
  " /root
}

step "debootstrap + clone" make_root
step "README command 1" in_root "$setup_cmd"
step "README command 2" in_root "$test_cmd"
step "installed prefix, no build tree" installed_prefix_works
step "Debian package (cpack)" build_deb
step "package install, smoke, purge" deb_installs_and_purges
if ((no_baselines)); then step "test command without baselines" without_baselines; fi

echo
echo "fresh-machine check passed (Debian 12 minbase root, clean clone of $commit):"
for name in "debootstrap + clone" "README command 1" "README command 2" \
            "installed prefix, no build tree" "Debian package (cpack)" \
            "package install, smoke, purge" "test command without baselines"; do
  if [ -n "${seconds[$name]:-}" ]; then printf '  %-34s %6s s\n' "$name" "${seconds[$name]}"; fi
done
