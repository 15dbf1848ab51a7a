"""benchmarks/topo_drop_pair.py on a topology shaped as NCCL dumps one (``NCCL_TOPO_DUMP_FILE``: each
``<gpu>`` under its ``<pci>`` node, its NVLinks to the NVSwitch as ``<nvlink target tclass count>``,
src/graph/xml.cc): every GPU pair gets a direct link except the one named."""

from __future__ import annotations

import importlib.util
import sys
import xml.etree.ElementTree as ET
from itertools import combinations
from pathlib import Path

import pytest

_SPEC = importlib.util.spec_from_file_location(
    "topo_drop_pair", Path(__file__).parents[2] / "benchmarks" / "topo_drop_pair.py"
)
assert _SPEC is not None and _SPEC.loader is not None
topo = importlib.util.module_from_spec(_SPEC)
sys.modules["topo_drop_pair"] = topo
_SPEC.loader.exec_module(topo)

BUS = ["0000:18:00.0", "0000:2a:00.0", "0000:3a:00.0", "0000:5d:00.0"]
DUMPED = (
    '<system version="1"><cpu numaid="0">'
    + "".join(
        f'<pci busid="{bus}" class="0x030200"><gpu dev="{dev}" sm="90" rank="{dev}" gdr="1">'
        '<nvlink target="fffffff:ffff:ff" count="18" tclass="0x068000"/></gpu></pci>'
        for dev, bus in enumerate(BUS)
    )
    + '<pci busid="0000:19:00.0" class="0x020700"/></cpu></system>'
)


def _pairs(xml_text: str) -> set[frozenset[int]]:
    root = ET.fromstring(xml_text)
    dev_of_bus = {
        pci.get("busid"): int(g.get("dev", "-1")) for pci in root.iter("pci") for g in pci.iter("gpu")
    }
    return {
        frozenset((int(g.get("dev", "-1")), dev_of_bus[link.get("target")]))
        for g in root.iter("gpu")
        for link in g.iter("nvlink")
        if link.get("tclass") == "0x030200"
    }


def test_every_pair_but_the_named_one_has_a_direct_nvlink_and_no_switch_remains() -> None:
    edited = topo.drop_pair(DUMPED, 0, 3)
    assert _pairs(edited) == {frozenset(p) for p in combinations(range(4), 2)} - {frozenset((0, 3))}
    assert "0x068000" not in edited  # through the switch every pair would be one hop apart again
    assert edited.count("<nvlink") == 2 * 5  # 5 pairs, each listed by both of its GPUs


def test_a_gpu_the_topology_lacks_is_refused() -> None:
    with pytest.raises(SystemExit, match="GPU dev 0 or 7 not in the topology"):
        topo.drop_pair(DUMPED, 0, 7)
