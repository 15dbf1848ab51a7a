#!/usr/bin/env bash
# What the lent machine is, read raw (nvidia-smi, NVML, sysfs), and nccl-tests' busbw on NVLink and sockets (issue 32).
# nccl-tests at >= 256 MB on the NVLink path and on the forced socket path, with every interface's byte
# counters read around each socket run: the facts the expected-performance model and the node snapshot
# are checked against. No metadata service is asked (nothing outside the machine is reached).
#   benchmarks/gpu.sh node-facts     # ~4 min on 4 GPUs; needs .whl/ and .gpurun/nccl-tests carried
# What comes back: summary.txt, node-facts.log, node-facts.tgz (raw files). (Was gpu_node_facts.sh.)
F="$OUT/facts"; mkdir -p "$F"
G=$(timeout 30 nvidia-smi -L | wc -l)
say "host $(hostname) $(date -u +%FT%TZ), $G GPUs"
timeout 30 nvidia-smi -L >"$F/nvidia-smi-L.txt" 2>&1
timeout 30 nvidia-smi topo -m >"$F/topo-m.txt" 2>&1
timeout 30 nvidia-smi topo -p2p n >"$F/topo-p2p.txt" 2>&1
timeout 60 nvidia-smi nvlink -s >"$F/nvlink-s.txt" 2>&1
timeout 60 nvidia-smi -q >"$F/nvidia-smi-q.txt" 2>&1
timeout 60 python3 - >"$F/nvml.json" 2>"$F/nvml.err" <<'PY'
import json, pynvml as n
n.nvmlInit()
out = {"driver": n.nvmlSystemGetDriverVersion(), "nvml": n.nvmlSystemGetNVMLVersion(), "gpus": []}
for i in range(n.nvmlDeviceGetCount()):
    h = n.nvmlDeviceGetHandleByIndex(i)
    g = {"index": i, "name": n.nvmlDeviceGetName(h), "memory": n.nvmlDeviceGetMemoryInfo(h).total,
         "pci": n.nvmlDeviceGetPciInfo(h).busId, "links": []}
    for f in ("CurrPcieLinkGeneration", "MaxPcieLinkGeneration", "CurrPcieLinkWidth", "MaxPcieLinkWidth"):
        try: g[f] = getattr(n, "nvmlDevice" + "Get" + f)(h)
        except n.NVMLError as e: g[f] = str(e)
    for link in range(18):
        try:
            st = n.nvmlDeviceGetNvLinkState(h, link)
            link_info = {"link": link, "state": st, "version": n.nvmlDeviceGetNvLinkVersion(h, link)}
            link_info["remote"] = n.nvmlDeviceGetNvLinkRemotePciInfo(h, link).busId
            try: link_info["remote_type"] = n.nvmlDeviceGetNvLinkRemoteDeviceType(h, link)
            except Exception as e: link_info["remote_type"] = str(e)
            g["links"].append(link_info)
        except n.NVMLError as e:
            g["links"].append({"link": link, "error": str(e)})
    out["gpus"].append(g)
print(json.dumps(out, indent=1, default=str))
PY
record "nvml dump: exit $? ($(wc -c <"$F/nvml.json") bytes)"
{ for d in /sys/class/net/*; do echo "== $d -> $(readlink -f $d)"; for a in speed mtu operstate type carrier; do echo "$a: $(cat $d/$a 2>&1)"; done
    echo "driver: $(basename "$(readlink -f $d/device/driver 2>/dev/null)" 2>/dev/null)"; done
  ls -la /sys/class/infiniband 2>&1; for d in /sys/class/infiniband/*/ports/*; do echo "== $d"; cat $d/rate $d/link_layer $d/state 2>&1; done
  for g in $(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader); do b=$(echo "${g:4}" | tr "A-F" "a-f"); p="/sys/bus/pci/devices/$b"
    echo "== gpu $g $(readlink -f $p 2>&1)"; for a in current_link_speed current_link_width max_link_speed max_link_width numa_node; do echo "$a: $(cat $p/$a 2>&1)"; done; done
} >"$F/sysfs.txt" 2>&1
cat /proc/net/dev >"$F/proc-net-dev-start.txt"
build_nccl_tests
B=$NT/build
MPI="mpirun --allow-run-as-root -np $G -x NCCL_NVLS_ENABLE=0 -x LD_LIBRARY_PATH"
for c in all_reduce all_gather reduce_scatter alltoall broadcast; do
  timeout 90 $MPI $B/${c}_perf -b 256M -e 1G -f 2 -n 20 -w 5 -c 0 -g 1 >"$F/nt-nvlink-$c.txt" 2>&1
  record "nvlink $c: exit $? | $(grep -E '^ +1073741824' "$F/nt-nvlink-$c.txt" | tr -s ' ' | cut -c1-110)"
done
SOCK="-x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=INIT,NET"
for c in all_reduce all_gather reduce_scatter alltoall broadcast; do
  cat /proc/net/dev >"$F/netdev-before-$c.txt"
  timeout 120 $MPI $SOCK $B/${c}_perf -b 256M -e 256M -n 5 -w 2 -c 0 -g 1 >"$F/nt-socket-$c.txt" 2>&1
  rc=$?; cat /proc/net/dev >"$F/netdev-after-$c.txt"
  record "socket $c: exit $rc | $(grep -E '^ +268435456' "$F/nt-socket-$c.txt" | tr -s ' ' | cut -c1-110)"
done
tar -czf "$OUT/node-facts.tgz" -C "$OUT" facts nccl-tests-build.log 2>/dev/null && rm -rf "$F" "$OUT/nccl-tests-build.log"
