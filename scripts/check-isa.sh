#!/usr/bin/env bash
# Checks that a onepass binary built for a baseline without AVX-512 (the x86-64-v3 container
# image, any portable build) uses AVX-512 only in the code that runs after the CPU check:
# functions named in onepass::kernels::avx512 (src/kernels/stream_gemm_avx512.h) and in
# vec_math.h's AVX-512 namespace. Any other function with an EVEX-encoded or opmask instruction
# would crash on a CPU without AVX-512 (an inline function or template instantiated in the
# AVX-512 file whose copy the linker kept for every caller, a static initializer there).
# Also fails when no allowed function has any, so a change in objdump's output cannot pass it.
#
#   scripts/check-isa.sh BINARY        (needs objdump from binutils; BINARY not stripped)
set -euo pipefail
bin=${1:?usage: check-isa.sh BINARY}
objdump -d --wide "$bin" | awk '
  # A function starts: "0000000000401000 <_ZN7onepass...>:" (mangled names).
  /^[0-9a-f]+ <[^>]*>:$/ { fn = $2; sub(/^</, "", fn); sub(/>:$/, "", fn); next }
  {
    if (split($0, f, "\t") < 3) next
    # EVEX: 0x62 first (in 64-bit code only AVX-512 instructions start so), after at most
    # segment or address-size prefixes. Opmask instructions (kmovw, kortestw, ...) are VEX.
    evex = f[2] ~ /^((26|2e|36|3e|64|65|67) )*62 /
    opmask = f[3] ~ /^k(mov|andn?|x?n?or|not|test|ortest|shift[lr]|unpck|add)[bwdq]* /
    if (!evex && !opmask) next
    if (fn ~ /^_ZZ?N7onepass7kernels(3vec)?6avx512/) allowed[fn] = 1
    else bad[fn] = 1
  }
  END {
    for (name in bad) { print "AVX-512 outside the dispatched kernel: " name; nbad++ }
    for (name in allowed) nallowed++
    if (nallowed == 0) { print "no AVX-512 found in onepass::kernels::avx512: nothing checked"; exit 1 }
    printf "AVX-512 in %d dispatched functions, in %d others\n", nallowed, nbad
    exit nbad > 0
  }'
