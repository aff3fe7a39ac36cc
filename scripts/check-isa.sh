#!/usr/bin/env bash
# Checks that a onepass build for a baseline without AVX-512 (the default x86-64-v3, the container
# image) uses AVX-512 only in code that runs after the CPU check: functions in the namespaces of
# the AVX-512 compilations, onepass::kernels::avx512 and ::avx512_bf16 (src/kernels/dispatch.h;
# stream_gemm_avx512.h's kernel is in the first), and vec_math.h's namespaces of the same names.
# Any other function with an EVEX-encoded or opmask instruction would crash on a CPU without
# AVX-512.
#
# BINARY is the linked program, what runs. LIBRARY (libonepass_kernels.a) holds every copy of
# every function before the linker keeps one: an inline function or template instantiated in an
# AVX-512 file outside those namespaces fails there whichever copy this link kept. And no object
# with AVX-512 code may hold a static initializer, which would run at start-up on any CPU. Each
# file must have some AVX-512 in those namespaces, so a change in objdump's output cannot pass.
#
#   scripts/check-isa.sh BINARY [LIBRARY...]   (needs objdump from binutils; files not stripped)
set -euo pipefail
bin=${1:?usage: check-isa.sh BINARY [LIBRARY...]}
shift

# check FILE KIND: KIND is "binary" or "library" (objects checked one by one).
check() {
  objdump -d -h --wide "$1" | awk -v file="$1" -v kind="$2" '
    function end_object() {
      if (kind == "library" && object != "" && has_init && object_allowed) {
        print "static initializer in an object with AVX-512 code: " object
        nbad++
      }
    }
    # A new object (an archive member, or the file itself): "name.o:     file format elf64-...".
    / file format / { end_object(); object = $1; sub(/:$/, "", object); has_init = 0
                      object_allowed = 0; next }
    # Section headers (-h): "  5 .init_array  00000008 ...".
    /^ *[0-9]+ \.(init_array|ctors)([ .]|$)/ { has_init = 1; next }
    # A function starts: "0000000000401000 <_ZN7onepass...>:" (mangled names).
    /^[0-9a-f]+ <[^>]*>:$/ { fn = $2; sub(/^</, "", fn); sub(/>:$/, "", fn); next }
    {
      if (split($0, f, "\t") < 3) next
      # EVEX: 0x62 first (in 64-bit code only AVX-512 instructions start so), after at most
      # segment or address-size prefixes. Opmask instructions (kmovw, kortestw, ...) are VEX.
      evex = f[2] ~ /^((26|2e|36|3e|64|65|67) )*62 /
      opmask = f[3] ~ /^k(mov|andn?|x?n?or|not|test|ortest|shift[lr]|unpck|add)[bwdq]* /
      if (!evex && !opmask) next
      if (fn ~ /^_Z+N7onepass7kernels(3vec)?(6avx512|11avx512_bf16)/) {
        allowed[fn] = 1
        object_allowed = 1
      } else if (!(fn in bad)) {
        bad[fn] = 1
        print "AVX-512 outside the dispatched kernels: " fn (kind == "library" ? " (" object ")" : "")
        nbad++
      }
    }
    END {
      end_object()
      for (name in allowed) nallowed++
      if (nallowed == 0) {
        print file ": no AVX-512 found in the dispatched namespaces: nothing checked"
        exit 1
      }
      printf "%s: AVX-512 in %d dispatched functions, %d problems\n", file, nallowed, nbad
      exit nbad > 0
    }'
}

status=0
check "$bin" binary || status=1
for library in "$@"; do
  check "$library" library || status=1
done
exit "$status"
