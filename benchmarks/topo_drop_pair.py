"""One GPU pair without a direct NVLink, for NCCL through ``NCCL_TOPO_FILE``: P2P off for that pair only.

NCCL 2.31 has no variable that disables P2P for one pair: the NCCL_P2P_* names in the 2.31.2 library's
strings are DISABLE (all pairs), LEVEL (by path type), DIRECT_DISABLE, READ_ENABLE, USE_CUDA_MEMCPY and
chunk/channel sizes. What it does take from the environment is its topology: ``NCCL_TOPO_FILE``
replaces what it would detect, a GPU node that already has ``<nvlink>`` children is not asked NVML for
links, and a link's ``tclass`` (the target's PCI class) says whether it reaches a GPU or an NVSwitch
(``ncclTopoGetXmlFromGpu``, src/graph/xml.cc, read at v2.30.7-1, the newest tag this project could
read). This rewrites a topology NCCL dumped itself (``NCCL_TOPO_DUMP_FILE``) so that every GPU pair has
a direct NVLink except the one named; with ``NCCL_P2P_LEVEL=NVL`` that pair's path (NVLink through a
third GPU, NVB) is above the P2P level, so NCCL should connect it without P2P and its P2P diagnostics
skip it, while every other pair keeps P2P (the GPU run of benchmarks/scenarios/nccl231.sh shows whether
it does). The links to the NVSwitch are replaced, not kept: through a switch every pair is one hop apart.

    python3 benchmarks/topo_drop_pair.py DUMPED.xml EDITED.xml 0 3      # GPU dev 0 <-> dev 3 loses P2P
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET

LINKS_PER_PAIR = "4"  # any count > 0 makes the pair NVLink-connected; it only sets the modelled bandwidth


def drop_pair(xml_text: str, first: int, second: int) -> str:
    root = ET.fromstring(xml_text)
    parents = {child: parent for parent in root.iter() for child in parent}
    gpus = {int(g.get("dev", "-1")): g for g in root.iter("gpu")}
    if first not in gpus or second not in gpus:
        raise SystemExit(f"GPU dev {first} or {second} not in the topology (it has {sorted(gpus)})")
    pci_of = {dev: parents[g] for dev, g in gpus.items()}
    for dev, gpu in gpus.items():
        for link in list(gpu.iter("nvlink")):
            gpu.remove(link)
        for peer, pci in sorted(pci_of.items()):
            if peer == dev or {dev, peer} == {first, second}:
                continue
            ET.SubElement(
                gpu, "nvlink", target=pci.get("busid", ""), count=LINKS_PER_PAIR, tclass=pci.get("class", "")
            )
    return ET.tostring(root, encoding="unicode")


def main(argv: list[str]) -> int:
    if len(argv) != 5:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as dumped:
        edited = drop_pair(dumped.read(), int(argv[3]), int(argv[4]))
    with open(argv[2], "w", encoding="utf-8") as out:
        out.write(edited + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
