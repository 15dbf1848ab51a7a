"""What NCCL really did, as read from its own debug log (the model; the parser is nccl_logs/attest.py).

Lives under results/ because it is part of a run's result document; analysis/ fills it in. Every
collection here is bounded by the size of the cluster (ranks, hosts, NICs, distinct messages), never by
the length of the log, so attesting a 1 GB log keeps a small document.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

TransportKind = Literal["p2p", "shm", "net", "collnet", "nvls", "other"]
"""How two ranks of a channel are connected: inside a node (p2p, shm, nvls) or through a network."""

NetworkKind = Literal["socket", "ib", "ofi", "tcpx", "tcpxo", "gib", "other"]
"""The NCCL network family, independent of how a version or plugin spells it (IB, IBext_v8, AWS Libfabric)."""

# Bounds that keep an attestation small however long the log is.
MAX_CHANNEL_LINKS = 512
MAX_MESSAGES = 64


class ChannelTransport(BaseModel):
    """One ``Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM`` line, reduced to what matters."""

    model_config = ConfigDict(extra="forbid")

    rank: int | None = None
    peer: int | None = None
    channel: int | None = None
    transport: str = Field(description="as NCCL writes it: P2P/CUMEM, SHM, NET/Socket/0, NET/IB/0/GDRDMA ...")
    kind: TransportKind = Field(description="p2p, shm, net, collnet, nvls")
    host: str | None = Field(default=None, description="host of the rank that logged the line")
    direction: Literal["send", "receive"] | None = None
    net_device: int | None = Field(default=None, description="NET device index (NET/IB/<n>), net links only")
    gdr: bool | None = Field(default=None, description="True when the link carries /GDRDMA")


class RankInfo(BaseModel):
    """One rank as NCCL (``comm ... rank 0 nranks 16 cudaDev 0 busId 1c000``) or nccl-tests introduced it."""

    model_config = ConfigDict(extra="forbid")

    rank: int
    nranks: int | None = None
    host: str | None = None
    pid: int | None = None
    cuda_dev: int | None = None
    bus_id: str | None = None
    gpu: str | None = Field(default=None, description="GPU name from nccl-tests' '# Using devices' block")


Confidence = Literal["proven", "inferred", "unknown"]
"""proven: a log line says it; inferred: it follows from lines that do not say it outright; unknown."""
MAX_PROOF_LINES = 3


class Claim(BaseModel):
    """One fact about the run, the log lines that prove it, and how sure the reading is."""

    model_config = ConfigDict(extra="forbid")

    value: str | int | bool | None = None
    confidence: Confidence = "unknown"
    lines: list[str] = Field(default_factory=list, description=f"up to {MAX_PROOF_LINES} proving log lines")
    note: str = Field(default="", description="what the value means, or why it is not known")


class TransportClaims(BaseModel):
    """The structured attestation (``doctor --format json``): what a careful reader of the log can claim."""

    model_config = ConfigDict(extra="forbid")

    inter_node: Claim = Field(default_factory=Claim, description="the network between nodes, or none")
    intra_node: Claim = Field(default_factory=Claim, description="p2p / shm / nvls / net inside a host")
    net_plugin: Claim = Field(default_factory=Claim, description="external net plugin: name, version, state")
    provider: Claim = Field(default_factory=Claim, description="libfabric provider (aws-ofi-nccl)")
    gdr: Claim = Field(default_factory=Claim, description="GPUDirect RDMA on the network links")
    nics_per_host: Claim = Field(default_factory=Claim)
    nodes: Claim = Field(default_factory=Claim)
    ranks: Claim = Field(default_factory=Claim)

    def items(self) -> list[tuple[str, Claim]]:
        return [(name, getattr(self, name)) for name in type(self).model_fields]


class Attestation(BaseModel):
    """The transport evidence of a run."""

    model_config = ConfigDict(extra="forbid")

    nccl_version: str | None = None
    nccl_versions: list[str] = Field(
        default_factory=list, description="every distinct version seen; more than one is itself a finding"
    )
    net_plugin: str | None = Field(default=None, description="plugin library loaded, e.g. libnccl-net.so")
    net_plugin_loaded: bool | None = None
    net_plugin_path: str | None = None
    net_plugin_error: str | None = Field(
        default=None, description="why a plugin did not load, as NCCL said it (first occurrence)"
    )
    net_plugin_version: str | None = Field(default=None, description="as the plugin prints it: 1.9.1-aws")
    net_plugin_refused: str | None = Field(
        default=None, description="the plugin's own words when it loaded but refused to run (first)"
    )
    collnet_plugin: str | None = None
    network: str | None = Field(default=None, description="network NCCL selected: Socket, IB, OFI, ...")
    network_kind: NetworkKind | None = None
    networks: dict[str, int] = Field(
        default_factory=dict, description="'Using network X' (or its older equivalents) counted per line"
    )
    ofi_provider: str | None = None
    net_device_count: int | None = Field(
        default=None, description="NICs the network found (e.g. OFI 'found 4 nics', NET/IB device list)"
    )
    net_devices: list[str] = Field(default_factory=list)
    net_devices_used: dict[str, list[int]] = Field(
        default_factory=dict, description="per host: NET device indices that channel links really use"
    )
    interfaces: list[str] = Field(default_factory=list, description="NET/Socket and OOB interfaces")
    bootstrap_interfaces: list[str] = Field(default_factory=list)
    transports: dict[str, int] = Field(
        default_factory=dict, description="count of channel links by transport"
    )
    transport_kinds: dict[str, int] = Field(
        default_factory=dict, description="count of channel links by kind (p2p, shm, net, ...)"
    )
    channel_links: list[ChannelTransport] = Field(
        default_factory=list, description=f"the first {MAX_CHANNEL_LINKS} channel links"
    )
    channel_links_total: int = 0
    intra_host_net_links: int = Field(
        default=0, description="channel links through NET between two ranks of the same host"
    )
    net_pairs: int = Field(
        default=0, description="distinct (logging rank, remote rank) pairs joined through NET"
    )
    gdr: bool | None = None
    gdr_disabled_devices: list[str] = Field(default_factory=list)
    nvls: bool | None = None
    nvls_channels: int | None = None
    collnet: bool | None = None
    collnet_channels: int | None = None
    nchannels: int | None = Field(default=None, description="coll channels (max over communicators)")
    p2p_channels: int | None = None
    ring_channels: int | None = None
    tree_channels: int | None = None
    nranks: int | None = None
    nnodes: int | None = None
    hosts: list[str] = Field(default_factory=list)
    virtual_nodes: list[str] = Field(
        default_factory=list, description="host/NCCL_HOSTID of ranks NCCL treats as separate nodes"
    )
    host_name_clash: list[str] = Field(
        default_factory=list, description="host names that carry several addresses (two machines, one name)"
    )
    ranks: list[RankInfo] = Field(default_factory=list)
    nccl_env: dict[str, str] = Field(
        default_factory=dict, description="'X set by environment to Y' lines, redacted"
    )
    warnings: list[str] = Field(default_factory=list, description=f"first {MAX_MESSAGES} distinct WARN lines")
    warning_count: int = 0
    errors: list[str] = Field(default_factory=list, description=f"first {MAX_MESSAGES} distinct error lines")
    error_count: int = 0
    lines_read: int = 0
    nccl_lines: int = Field(default=0, description="lines that carried NCCL output")
    source_files: list[str] = Field(default_factory=list)
    unread: list[str] = Field(
        default_factory=list, description="per file, what was skipped and why (NUL padding, over-long lines)"
    )
    proofs: dict[str, list[str]] = Field(
        default_factory=dict, description=f"per fact, the first {MAX_PROOF_LINES} log lines that show it"
    )
    claims: TransportClaims | None = Field(default=None, description="the structured attestation")

    @property
    def has_nccl_output(self) -> bool:
        return self.nccl_lines > 0

    @property
    def uses_network(self) -> bool:
        """True when at least one channel link went through a network transport."""
        return self.transport_kinds.get("net", 0) > 0 or self.transport_kinds.get("collnet", 0) > 0
