"""The attestation being built from an NCCL log: applies ``Template`` effects, and ends in an ``Attestation``.

Every collection is bounded by the cluster (ranks, hosts, NICs, distinct messages), never by the log's
length. The ops here are the idempotent records of ``nccl_templates.py``: applying one twice changes
nothing, which is what lets the parser apply each distinct line once.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from gpufabric.analysis import nccl_patterns as pat
from gpufabric.analysis.nccl_templates import HOST, PID, Template
from gpufabric.redact import redact_env
from gpufabric.results.attestation import MAX_MESSAGES, Attestation, ChannelTransport, RankInfo

# Net links are remembered as (host of the logging rank, rank, peer) to find, at the end, the ones whose
# two ends sit on one host. Bounded by ranks x peers; this cap only guards against pathological logs.
_MAX_NET_PAIRS = 65536
_MAX_RANKS = 16384


class State:
    def __init__(self) -> None:
        self.att = Attestation()
        self.versions: dict[str, None] = {}
        self.hosts: dict[str, None] = {}
        self.ranks: dict[tuple[int, str | None, int | None], RankInfo] = {}
        self.rank_host: dict[int, str] = {}
        self.networks: Counter[str] = Counter()
        self.transports: Counter[str] = Counter()
        self.kinds: Counter[str] = Counter()
        self.scalars: Counter[str] = Counter()
        self.net_pairs: set[tuple[str | None, int, int]] = set()
        self.devices_used: dict[str, set[int]] = {}
        self.ring_channels: set[int] = set()
        self.tree_channels: set[int] = set()
        self.interfaces: dict[str, None] = {}
        self.bootstrap: dict[str, None] = {}
        self.net_devices: dict[str, None] = {}
        self.gdr_enabled: dict[str, None] = {}
        self.gdr_disabled: dict[str, None] = {}
        self.warnings: dict[str, None] = {}
        self.errors: dict[str, None] = {}
        self.env: dict[str, str] = {}
        self.nvls_available: bool | None = None
        self.lines_read = 0

    # -- applying a template ----------------------------------------------------------------------
    def apply_ops(self, template: Template, host: str | None, pid: int | None) -> None:
        """The template's idempotent records: shared ones once per template, the rest for this header."""
        if template.header and host:
            self.hosts.setdefault(host)
        if not template.applied:
            template.applied = True
            for name, args in template.shared:
                _OPS[name](self, *args)
        for name, args in template.per_line:
            _OPS[name](self, *[host if a is HOST else pid if a is PID else a for a in args])

    def tally(self, template: Template) -> None:
        """Add ``hits`` occurrences of the template's counts, then start its count again."""
        hits, template.hits = template.hits, 0
        if not hits:
            return
        for tally, key, weight in template.counts:
            if key is None:
                self.scalars[tally] += weight * hits
            else:
                counter: Counter[str] = getattr(self, tally)
                counter[key] += weight * hits

    def assign(self, key: tuple[str, str], value: str) -> None:
        """A last-wins field: ``NCCL_X set by environment to Y``, the OFI provider, the plugin loaded."""
        field, name = key
        att = self.att
        if field == "env":
            self.env[name] = value
        elif field == "net_plugin":
            att.net_plugin, att.net_plugin_loaded = value, True
        else:
            setattr(att, field, value)

    def add_link(self, link: dict[str, Any], host: str | None) -> None:
        self.att.channel_links.append(ChannelTransport(host=host, **link))

    # -- the idempotent records (``_op_<name>``, named in templates) ------------------------------
    def _op_version(self, version: str) -> None:
        self.versions.setdefault(version)

    def _op_touch(self, tally: str, key: str) -> None:
        counter: Counter[str] = getattr(self, tally)
        counter[key] += 0  # first-seen order of keys decides ties later

    def _op_warning(self, msg: str) -> None:
        if len(self.warnings) < MAX_MESSAGES:
            self.warnings.setdefault(msg)

    def _op_error(self, msg: str) -> None:
        if len(self.errors) < MAX_MESSAGES:
            self.errors.setdefault(msg)

    def _op_device(self, host: str | None, device: int) -> None:
        self.devices_used.setdefault(host or "?", set()).add(device)

    def _op_pair(self, host: str | None, rank: int, remote: int) -> None:
        if len(self.net_pairs) < _MAX_NET_PAIRS:
            self.net_pairs.add((host, rank, remote))

    def _op_ring(self, channel: int) -> None:
        self.ring_channels.add(channel)

    def _op_trees(self, channels: tuple[int, ...]) -> None:
        self.tree_channels.update(channels)

    def _op_comm_rank(self, rank: int, nranks: int, host: str | None, pid: int | None, dev: int,
                      bus: str | None) -> None:  # fmt: skip
        self._rank(RankInfo(rank=rank, nranks=nranks, host=host, pid=pid, cuda_dev=dev, bus_id=bus))

    def _op_tests_rank(self, host: str, rank: int, pid: int, dev: int, bus: str, gpu: str | None) -> None:
        self.hosts.setdefault(host)
        self._rank(RankInfo(rank=rank, host=host, pid=pid, cuda_dev=dev, bus_id=bus, gpu=gpu))

    def _rank(self, info: RankInfo) -> None:
        key = (info.rank, info.host, info.cuda_dev)
        if key not in self.ranks and len(self.ranks) < _MAX_RANKS:
            self.ranks[key] = info
        if info.host:
            self.rank_host.setdefault(info.rank, info.host)
        if info.nranks:
            self.att.nranks = max(self.att.nranks or 0, info.nranks)

    def _op_nodes(self, nnodes: int, nranks: int) -> None:
        self.att.nnodes = max(self.att.nnodes or 0, nnodes)
        self.att.nranks = max(self.att.nranks or 0, nranks)

    def _op_channel_counts(self, coll: str, collnet: str | None, nvls: str | None, p2p: str) -> None:
        att = self.att

        def bigger(old: int | None, text: str | None) -> int | None:
            return old if text is None else max(old or 0, int(text))

        att.nchannels = bigger(att.nchannels, coll)
        att.collnet_channels = bigger(att.collnet_channels, collnet)
        att.nvls_channels = bigger(att.nvls_channels, nvls)
        att.p2p_channels = bigger(att.p2p_channels, p2p)

    def _op_bootstrap(self, iface: str) -> None:
        self.bootstrap.setdefault(iface)

    def _op_interface(self, iface: str) -> None:
        self.interfaces.setdefault(iface)

    def _op_net_device(self, device: str) -> None:
        self.net_devices.setdefault(device)

    def _op_device_count(self, count: int) -> None:
        self.att.net_device_count = max(self.att.net_device_count or 0, count)

    def _op_gdr(self, enabled: bool, key: str) -> None:
        (self.gdr_enabled if enabled else self.gdr_disabled).setdefault(key)

    def _op_nvls_available(self, available: bool) -> None:
        self.nvls_available = (self.nvls_available or False) or available

    def _op_nvls(self) -> None:
        self.att.nvls = True

    def _op_collnet(self) -> None:
        self.att.collnet = True

    def _op_plugin_or(self, name: str) -> None:
        """A plugin announced by its version (TCPX, FasTrak, gIB): named unless a loaded plugin was."""
        self.att.net_plugin = self.att.net_plugin or name
        self.att.net_plugin_loaded = True

    def _op_plugin_failed(self, lib: str, failed: bool, why: str | None) -> None:
        att = self.att
        if att.net_plugin_loaded is not True:
            att.net_plugin_loaded = False
            att.net_plugin = att.net_plugin or lib
        if failed and att.net_plugin_error is None:
            att.net_plugin_error = why

    # -- the end ----------------------------------------------------------------------------------
    def result(self) -> Attestation:
        att = self.att
        att.lines_read, att.nccl_lines = self.lines_read, self.scalars["nccl_lines"]
        att.channel_links_total = self.scalars["channel_links_total"]
        att.warning_count, att.error_count = self.scalars["warning_count"], self.scalars["error_count"]
        att.nccl_versions = list(self.versions)
        att.nccl_version = att.nccl_versions[0] if att.nccl_versions else None
        att.hosts = list(self.hosts)
        att.ranks = sorted(self.ranks.values(), key=lambda r: (r.rank, r.host or ""))
        att.networks = dict(self.networks)
        att.network = self._chosen_network()
        att.network_kind = pat.network_kind(att.network) if att.network else None
        att.transports = dict(self.transports)
        att.transport_kinds = dict(self.kinds)
        att.net_devices_used = {host: sorted(devs) for host, devs in self.devices_used.items()}
        att.net_devices = list(self.net_devices)
        att.interfaces = list(self.interfaces)
        att.bootstrap_interfaces = list(self.bootstrap)
        att.ring_channels = len(self.ring_channels) or None
        att.tree_channels = len(self.tree_channels) or None
        att.gdr_disabled_devices = list(self.gdr_disabled)
        att.gdr = self._gdr()
        if att.nvls is None and att.nvls_channels is not None:
            att.nvls = att.nvls_channels > 0
        if att.nvls is None and self.nvls_available is False:
            att.nvls = False
        # NCCL 2.17+ prints "N collnet channels" even with no CollNet plugin, so only real evidence counts.
        if att.collnet is None and (att.collnet_channels is not None or self.kinds):
            att.collnet = bool(att.collnet_plugin) or self.kinds.get("collnet", 0) > 0
        att.intra_host_net_links = sum(
            1 for host, _rank, peer in self.net_pairs if host is not None and self.rank_host.get(peer) == host
        )
        # Hosts are the truth: with P2P and SHM disabled NCCL reports every rank as its own node.
        if self.rank_host and len(self.rank_host) >= (att.nranks or 0):
            att.nnodes = len(set(self.rank_host.values()))
        elif self.rank_host and att.nnodes == att.nranks:
            att.nnodes = None  # NCCL's "nNodes" = nRanks here only means P2P/SHM were off; hosts unknown
        att.nccl_env = redact_env(self.env)
        att.warnings = list(self.warnings)
        att.errors = list(self.errors)
        return att

    def _chosen_network(self) -> str | None:
        # What the channels really went through wins; then what NCCL said it uses; then what it set up.
        from_links: Counter[str] = Counter()
        for transport, count in self.transports.items():
            name = pat.net_parts(transport)[0]
            if name:
                from_links[name] += count
        for source in (from_links, +self.networks, self.networks):
            if source:
                return source.most_common(1)[0][0]
        return None

    def _gdr(self) -> bool | None:
        if self.scalars["gdr_links"]:
            return True
        if self.scalars["net_links"]:
            return False
        if self.gdr_enabled:
            return True
        real_disabled = [d for d in self.gdr_disabled if not d.startswith("Socket:")]
        return False if real_disabled else None


_OPS: dict[str, Any] = {
    name.removeprefix("_op_"): fn for name, fn in vars(State).items() if name.startswith("_op_")
}
