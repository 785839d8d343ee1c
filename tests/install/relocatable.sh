#!/usr/bin/env bash
# The installed tool on its own (issue 23, item 1): installs the build to a temporary prefix,
# moves the prefix elsewhere (it must not depend on where it was installed to), hides the checkout
# and the build tree behind empty tmpfs mounts in a private mount namespace, then uses the install
# as a user would: a shipped platform and workload by name, a sweep with its plot, a sensitivity
# study with its tornado, and the Python package. Skips (77) where no mount namespace can be made.
# Usage: relocatable.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(realpath "$1")
src=$(realpath "$2")

if [ -z "${NCTLM_HIDDEN_PREFIX:-}" ]; then
  tmp=$(mktemp -d /tmp/nctlm-relocatable.XXXXXX)
  trap 'rm -rf "$tmp"' EXIT
  cmake --install "$build" --prefix "$tmp/installed-here" >/dev/null
  # Every script the CLI runs (find_script / StudyRun::draw) is installed.
  for name in $(grep -rhoE '(find_script|draw)\("[a-z-]+"' "$src/study" "$src/apps" "$src/platforms" "$src/testbenches" |
                sed -E 's/.*\("([a-z-]+)"/\1/' | sort -u); do
    [ -x "$tmp/installed-here/share/nctlm/scripts/$name" ] || { echo "scripts/$name is run but not installed"; exit 1; }
  done
  mv "$tmp/installed-here" "$tmp/moved-there"
  for ns in "unshare -m --propagation private" "unshare -rm --propagation private"; do
    if $ns true 2>/dev/null; then
      NCTLM_HIDDEN_PREFIX=$tmp/moved-there $ns bash "$0" "$build" "$src"
      exit $?
    fi
  done
  echo "SKIP: no mount namespace here (unshare -m / -rm); the checkout cannot be hidden"
  exit 77
fi

prefix=$NCTLM_HIDDEN_PREFIX
mount -t tmpfs none "$src"
case "$build/" in "$src"/*) ;; *) mount -t tmpfs none "$build" ;; esac
[ ! -e "$src/configs" ] && [ ! -e "$build/bin" ] || { echo "the checkout is still visible"; exit 1; }
work=$(dirname "$prefix")/work
mkdir -p "$work"
cd "$work"
nctlm=$prefix/bin/nctlm
check() { echo "== $*"; }

check "nctlm paths: the data beside the binary"
"$nctlm" paths | tee paths.txt
grep -q "^found by  install $prefix\$" paths.txt

check "run -p trn1 (shipped platform by name)"
"$nctlm" run -p trn1 -t probe | tee probe.txt
grep -q "latency 140.93 ns" probe.txt

check "run -w by name"
"$nctlm" run -p trn1 -t gemm -w gemm_32x3072x32 -q --stats-json gemm.json
grep -q '"efficiency"' gemm.json

check "sweep with a plot"
cat > spec.yaml <<'SPEC'
name: bytes
platform: trn1
testbench: probe
grid:
  testbench.bytes: [1 KiB, 4 KiB, 16 KiB]
plot: {x: testbench.bytes, y: latency_ns}
SPEC
"$nctlm" sweep spec.yaml -o sweep -j 2
[ -s sweep/bytes.png ] || { echo "the sweep drew no plot"; exit 1; }

check "uncertainty with its intervals"
"$nctlm" uncertainty -p trn1 -t probe -n 4 --params noc.hop_cycles,noc.clock -o unc -j 2 > unc.txt
[ -s unc/uncertainty.png ] || { echo "no interval plot"; ls unc; exit 1; }

check "sensitivity with its tornado"
"$nctlm" sensitivity -p trn1 -t probe --params hbm.pc_bandwidth,noc.hop_cycles -o sens -j 2 > sens.txt
[ -s sens/tornado-latency_ns.png ] || { echo "no tornado plot"; ls sens; exit 1; }

check "a study whose plot script is missing says so and names no plot"
mv "$prefix/share/nctlm/scripts/tornado" "$work/tornado.hidden"
"$nctlm" sensitivity -p trn1 -t probe --params noc.hop_cycles -o sens-noplot -j 2 > noplot.txt 2> noplot.err
mv "$work/tornado.hidden" "$prefix/share/nctlm/scripts/tornado"
grep -q "no tornado script found (install $prefix" noplot.err || { cat noplot.err; exit 1; }
! grep -q 'tornado' noplot.txt || { echo "a plot named though none was drawn"; cat noplot.txt; exit 1; }
[ ! -e sens-noplot/tornado-latency_ns.png ]

check "nctlm kernel: the installed NKI tracer on an installed library kernel"
"$nctlm" kernel "$prefix/share/nctlm/kernels/add.py::add" --arg 'a=bf16[256,1024]' --arg 'b=bf16[256,1024]' \
  -p trn1 -o add.json | tee kernel.txt
grep -q '"format": "nctlm-kernel"' add.json
grep -q '^kernel add on ' kernel.txt

check "the Python package from the install (Debian python3)"
PYTHONPATH=$("$nctlm" paths --python) /usr/bin/python3 - <<'PY'
import nctlm, nctlm.nki, os
prefix = os.path.realpath(os.environ["NCTLM_HIDDEN_PREFIX"])
assert os.path.realpath(nctlm.executable()) == prefix + "/bin/nctlm", nctlm.executable()
assert os.path.realpath(nctlm.nki.__file__).startswith(prefix + "/"), nctlm.nki.__file__
r = nctlm.run(platform="trn1", testbench="probe")
assert abs(r["results"]["latency_ns"] - 140.93) < 0.01, r["results"]
print("python: probe latency", r["results"]["latency_ns"], "ns from", nctlm.executable())
PY
echo "relocatable install: ok"
