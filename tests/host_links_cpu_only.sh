#!/bin/sh
# The host executable must not need anything from CUDA at link time: only the CUDA
# backend plugin may. Usage: host_links_cpu_only.sh <path to plugtrain>
set -eu
exe="$1"
needed=$(readelf -d "$exe" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "plugtrain needs: $(echo $needed)"
echo "$needed" | grep -q '^libtorch_cpu\.so$' || { echo "FAIL: libtorch_cpu.so is not linked"; exit 1; }
bad=$(echo "$needed" | grep -Ei 'cuda|cudart|cublas|cudnn|nccl|nvrtc|^libtorch\.so$' || true)
if [ -n "$bad" ]; then
  echo "FAIL: the host links CUDA libraries: $bad"
  exit 1
fi
echo "ok: no CUDA library among the host's NEEDED entries"
