"""Lookups by name: instance types (with "did you mean"), fabrics, and shapes from Kubernetes node labels."""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from gpufabric.catalog.loader import load_catalog
from gpufabric.catalog.model import Fabric, InstanceType, NodeDetection, NodeLabelRule
from gpufabric.catalog.names import Cloud, FabricName
from gpufabric.errors import CatalogError

GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
GPU_COUNT_LABEL = "nvidia.com/gpu.count"


def _by_spelling() -> dict[str, InstanceType]:
    return {
        spelling.lower(): inst for inst in load_catalog().instances for spelling in (inst.name, *inst.aliases)
    }


def _suggest(name: str, choices: list[str]) -> str:
    # A family prefix ("p5", "a3-") is too short for difflib's ratio: offer the family's members first.
    wanted = name.strip().lower()
    family = [c for c in choices if wanted and c.lower().startswith(wanted)]
    close = family[:3] or difflib.get_close_matches(name, choices, n=3, cutoff=0.6)
    if close:
        return "did you mean " + " or ".join(repr(c) for c in close) + "?"
    return "see `gpufabric catalog list` for the known types"


def get_instance(name: str) -> InstanceType:
    """The catalog entry for ``name`` (case-insensitive; aliases like ``ml.p4d.24xlarge`` work)."""
    found = _by_spelling().get(name.strip().lower())
    if found is None:
        names = [inst.name for inst in load_catalog().instances]
        raise CatalogError(f"instance type {name!r} is not in the catalog; {_suggest(name, names)}")
    return found


def list_instances(cloud: Cloud | str | None = None) -> list[InstanceType]:
    """Every entry, in data-file order; only one cloud's when ``cloud`` is given."""
    if cloud is None:
        return list(load_catalog().instances)
    try:
        wanted = Cloud(str(cloud).lower())
    except ValueError:
        choices = ", ".join(c.value for c in Cloud)
        raise CatalogError(f"--cloud: {cloud!r} is not a known cloud; choose one of {choices}") from None
    return [inst for inst in load_catalog().instances if inst.cloud is wanted]


def fabric_spellings() -> dict[str, FabricName]:
    """Every accepted spelling (names and aliases, lower case) -> the fabric: the one vocabulary that plan,
    doctor, compare, report and bench --ab share."""
    spellings: dict[str, FabricName] = {}
    for fabric in load_catalog().fabrics.values():
        for spelling in (fabric.name.value, *fabric.aliases):
            spellings[spelling.lower()] = fabric.name
    return spellings


def resolve_fabric(name: FabricName | str, *, option: str = "fabric") -> FabricName:
    """``tcpx``, ``GPUDirect-TCPX``, ``gpudirect-tcpx`` -> FabricName.GPUDIRECT_TCPX. Unknown spellings raise
    one line naming ``option``, the choices and the closest match."""
    if isinstance(name, FabricName):
        return name
    key = str(name).strip().lower().replace("_", "-")
    spellings = fabric_spellings()
    found = spellings.get(key) or spellings.get(key.replace(" ", "-"))
    if found is None:
        choices = [f.value for f in FabricName]
        close = difflib.get_close_matches(key, list(spellings), n=1, cutoff=0.6)
        hint = f"did you mean {close[0]!r}?" if close else _suggest(str(name), choices)
        aliases = ", ".join(sorted(set(spellings) - set(choices)))
        raise CatalogError(
            f"{option}: unknown value {name!r}; choose one of {', '.join(choices)} "
            f"(aliases: {aliases}); {hint}"
        )
    return found


def get_fabric(name: FabricName | str) -> Fabric:
    """The fabric definition: env, off profile, NCCL network name; any spelling ``resolve_fabric`` takes."""
    return load_catalog().fabrics[resolve_fabric(name)]


def list_fabrics() -> list[Fabric]:
    return list(load_catalog().fabrics.values())


def find_by_accelerator(accelerator: str, count: int, cloud: Cloud | str | None = None) -> list[InstanceType]:
    """Entries with exactly this accelerator model and count, fastest fabric first."""
    wanted = accelerator.strip().lower()
    hits = [
        inst
        for inst in list_instances(cloud)
        if inst.accelerator.lower() == wanted and inst.accelerator_count == count
    ]
    return sorted(hits, key=lambda inst: (not inst.has_fabric, -(inst.network_gbps or 0)))


def detect_node_shape(labels: Mapping[str, str]) -> NodeDetection | None:
    """Provider, shape and fabric variant from one node's labels; None when no provider rule matches."""
    for rule in load_catalog().rules:
        if not any(key.startswith(rule.label_prefixes) for key in labels):
            continue
        return _detect_with_rule(rule, labels)
    return _detect_by_instance_type(labels)


# The well-known instance-type labels every provider sets (kubelet's cloud provider).
INSTANCE_TYPE_LABELS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type")


def _detect_by_instance_type(labels: Mapping[str, str]) -> NodeDetection | None:
    """No provider label: the instance-type value alone, when it names a catalog entry (aliases such
    as ``ml.p4d.24xlarge`` included), gives the shape, its cloud, and that cloud's provider rule."""
    by_spelling = _by_spelling()
    for label in INSTANCE_TYPE_LABELS:
        inst = by_spelling.get(labels.get(label, "").strip().lower())
        if inst is None:
            continue
        rule = next((r for r in load_catalog().rules if r.cloud is inst.cloud), None)
        if rule is None:
            return None
        return NodeDetection(
            provider=rule.provider,
            cloud=inst.cloud,
            instance=inst,
            fabric=inst.fabric,
            matched_by=f"{label}={labels[label]} (no provider label: "
            f"{inst.cloud.value} from the catalog entry)",
        )
    return None


def _detect_with_rule(rule: NodeLabelRule, labels: Mapping[str, str]) -> NodeDetection:
    """The node's shape once ``rule``'s provider labels matched: instance-type labels, then GPU labels."""
    by_spelling = _by_spelling()
    for label in rule.instance_type_labels:
        value = labels.get(label)
        if not value:
            continue
        for prefix in rule.strip_prefixes:
            value = value.removeprefix(prefix)
        inst = by_spelling.get(value.lower())
        if inst is not None and inst.cloud is rule.cloud:
            return NodeDetection(
                provider=rule.provider,
                cloud=rule.cloud,
                instance=inst,
                fabric=inst.fabric,
                matched_by=f"{label}={labels[label]}",
            )
    product, count = labels.get(GPU_PRODUCT_LABEL, ""), labels.get(GPU_COUNT_LABEL, "")
    if product and count.isdigit():
        for inst in list_instances(rule.cloud):
            if inst.accelerator_count == int(count) and _product_matches(product, inst.accelerator):
                return NodeDetection(
                    provider=rule.provider,
                    cloud=rule.cloud,
                    instance=inst,
                    fabric=inst.fabric,
                    matched_by=f"{GPU_PRODUCT_LABEL}={product}, {GPU_COUNT_LABEL}={count}",
                )
    return NodeDetection(
        provider=rule.provider,
        cloud=rule.cloud,
        instance=None,
        fabric=FabricName.SOCKET,
        matched_by=f"provider {rule.provider} recognised, but no label names a catalog shape",
    )


def _product_matches(product: str, accelerator: str) -> bool:
    """'NVIDIA-H100-80GB-HBM3' names H100; token match so that H100 does not match H1000."""
    tokens = product.upper().replace("_", "-").split("-")
    return accelerator.upper() in tokens


def match_node_labels(labels: Mapping[str, str]) -> InstanceType | None:
    """The catalog shape these node labels identify, or None."""
    detection = detect_node_shape(labels)
    return detection.instance if detection else None
