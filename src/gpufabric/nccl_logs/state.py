"""The attestation being built from an NCCL log: applies ``Template`` effects, and ends in an ``Attestation``.

Every collection is bounded by the cluster (ranks, hosts, NICs, distinct messages), never by the log's
length. The ops here are the idempotent records of ``templates.py``: applying one twice changes
nothing, which is what lets the parser apply each distinct line once.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from gpufabric.nccl_logs import patterns as pat
from gpufabric.nccl_logs.claims import build_claims
from gpufabric.nccl_logs.templates import HOST, PID, Template
from gpufabric.redact import redact_env, scrub
from gpufabric.results.attestation import (
    MAX_MESSAGES,
    MAX_PROOF_LINES,
    Attestation,
    ChannelTransport,
    RankInfo,
)

# Net links are remembered as (host of the logging rank, rank, peer) to find, at the end, the ones whose
# two ends sit on one host. Bounded by ranks x peers; this cap only guards against pathological logs.
_MAX_NET_PAIRS = 65536
_MAX_RANKS = 16384
_MAX_HOSTIDS = 4096
_MAX_FACTS = 64


def redact_line(text: str) -> str:
    """The doctor repeats lines, never a URL's credentials: ``redact.scrub`` (``https://user:p@ss@db`` ->
    ``https://<redacted>@db``), the one place secret shapes are known; other shapes are scrubbed where the
    report is rendered (``scrub_model``), so lines without a URL skip the regex here."""
    return scrub(text) if "://" in text else text


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
        self.net_pairs: set[tuple[str | None, int, int, int | None]] = set()
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
        self.proofs: dict[str, list[str]] = {}
        self.hostids: dict[tuple[str | None, int | None], str] = {}  # (host, pid) -> NCCL_HOSTID
        self.rank_proc: dict[int, tuple[str | None, int | None]] = {}  # rank -> (host, pid)
        self.addresses: dict[str, set[str]] = {}  # host -> the addresses its NCCL lines name
        self.link_proc: dict[int, tuple[str, int | None]] = {}  # rank -> (host, pid) of its NET lines

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
            self.warnings.setdefault(redact_line(msg))

    def _op_error(self, msg: str) -> None:
        if len(self.errors) < MAX_MESSAGES:
            self.errors.setdefault(redact_line(msg))

    def _op_proof(self, fact: str, host: str | None, msg: str) -> None:
        lines = self.proofs.get(fact)
        if lines is None:
            if len(self.proofs) >= _MAX_FACTS:
                return
            lines = self.proofs[fact] = []
        text = redact_line(f"{host}: {msg}" if host else msg)
        if len(lines) < MAX_PROOF_LINES and text not in lines:
            lines.append(text[:400])

    def _op_hostid(self, host: str | None, pid: int | None, value: str) -> None:
        if len(self.hostids) < _MAX_HOSTIDS:
            self.hostids[(host, pid)] = value

    def _op_plugin_own(self, name: str) -> None:
        """The plugin's own lines prove it runs (it is named from them), unless it refused to."""
        att = self.att
        if name == "SHARP":
            att.collnet_plugin = att.collnet_plugin or name
            return
        att.net_plugin = att.net_plugin or name
        if att.net_plugin_loaded is not False:
            att.net_plugin_loaded = True

    def _op_plugin_refused(self, name: str, why: str) -> None:
        att = self.att
        att.net_plugin = att.net_plugin or name
        att.net_plugin_refused = att.net_plugin_refused or why

    def _op_plugin_path_seen(self) -> None:
        """``Plugin Path : .../libnccl-net.so``: printed by a plugin NCCL loaded (its name comes from its
        other lines, e.g. ``P2P plugin IBext``, else from the path)."""
        self.att.net_plugin_loaded = True

    def _op_plugin_version(self, version: str | None) -> None:
        if version:
            self.att.net_plugin_version = self.att.net_plugin_version or version

    def _op_device(self, host: str | None, device: int) -> None:
        self.devices_used.setdefault(host or "?", set()).add(device)

    def _op_pair(self, host: str | None, rank: int, remote: int, pid: int | None = None) -> None:
        if len(self.net_pairs) < _MAX_NET_PAIRS:
            self.net_pairs.add((host, rank, remote, pid))

    def _op_link_rank(self, host: str | None, pid: int | None, rank: int) -> None:
        if host and len(self.link_proc) < _MAX_RANKS:
            self.link_proc.setdefault(rank, (host, pid))

    def _op_ring(self, channel: int) -> None:
        self.ring_channels.add(channel)

    def _op_trees(self, channels: tuple[int, ...]) -> None:
        self.tree_channels.update(channels)

    def _op_comm_rank(self, rank: int, nranks: int, host: str | None, pid: int | None, dev: int,
                      bus: str | None) -> None:  # fmt: skip
        self._rank(RankInfo(rank=rank, nranks=nranks, host=host, pid=pid, cuda_dev=dev, bus_id=bus))
        if len(self.rank_proc) < _MAX_RANKS:
            self.rank_proc.setdefault(rank, (host, pid))

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

    def _op_bootstrap(self, iface: str, host: str | None = None, address: str | None = None) -> None:
        self.bootstrap.setdefault(iface)
        self._address(host, address)

    def _op_address(self, host: str | None, address: str) -> None:
        self._address(host, address)

    def _address(self, host: str | None, address: str | None) -> None:
        if (
            host
            and address
            and not address.startswith(("127.", "::1", "fe80"))
            and len(self.addresses) < 4096
        ):
            self.addresses.setdefault(host, set()).add(address)

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
        # Two machines with one host name (both `ubuntu`) show two addresses: the name does not say which
        # ranks share a machine, so no pair of them is judged to be on one host.
        att.host_name_clash = sorted(h for h, addrs in self.addresses.items() if len(addrs) > 1)
        # Virtual nodes: ranks with their own NCCL_HOSTID are separate nodes to NCCL though on one host.
        att.virtual_nodes = sorted({f"{h}/{v}" for (h, _pid), v in self.hostids.items() if h})
        rank_node = self._rank_nodes()
        att.net_pairs = len(self.net_pairs)
        att.intra_host_net_links = sum(
            1
            for host, _rank, peer, pid in self.net_pairs
            if host is not None
            and host not in att.host_name_clash
            and rank_node.get(peer) == self._node_of(host, pid)
        )
        # nccl-tests' rank 0 lists every rank of the job: a block from rank 0 without gaps is complete.
        listed = {info.rank for info in self.ranks.values() if info.nranks is None and info.host}
        if not att.nranks and listed and listed == set(range(len(listed))):
            att.nranks = len(listed)
        # Hosts are the truth: with P2P and SHM disabled NCCL reports every rank as its own node.
        if rank_node and att.nranks and len(rank_node) >= att.nranks:
            att.nnodes = len(set(rank_node.values()))
        elif rank_node and att.nnodes == att.nranks and not self.hostids:
            att.nnodes = None  # NCCL's "nNodes" = nRanks here only means P2P/SHM were off; hosts unknown
        att.nccl_env = redact_env(self.env)
        att.warnings = list(self.warnings)
        att.errors = list(self.errors)
        att.proofs = {fact: list(lines) for fact, lines in self.proofs.items()}
        if att.net_plugin_loaded and not att.net_plugin and att.net_plugin_path:
            att.net_plugin = att.net_plugin_path.rsplit("/", 1)[-1]
        att.claims = build_claims(att)
        return att

    def _node_of(self, host: str | None, pid: int | None) -> str | None:
        """The node NCCL sees: the host, or ``host/<NCCL_HOSTID>`` for a virtual node."""
        hostid = self.hostids.get((host, pid))
        return f"{host}/{hostid}" if hostid and host else host

    def _rank_nodes(self) -> dict[int, str]:
        """rank -> node, from Init and nccl-tests' rank lines, else from the host that logged the rank's
        NET channel lines."""
        procs = {**self.link_proc, **self.rank_proc}
        if not self.hostids:
            return {rank: host for rank, (host, _pid) in self.link_proc.items() if host} | self.rank_host
        nodes = {rank: self._node_of(*proc) for rank, proc in procs.items()}
        return {rank: node for rank, node in nodes.items() if node} or dict(self.rank_host)

    def _chosen_network(self) -> str | None:
        # What the channels really went through wins; then what NCCL said it uses; then what it set up.
        from_links: Counter[str] = Counter()
        for transport, count in self.transports.items():
            name = pat.net_parts(transport)[0]
            if name:
                from_links[name] += count
        for source in (from_links, +self.networks):
            if source:
                return source.most_common(1)[0][0]
        # Only set up, never said to be used: a plugin's own network beats NCCL's Socket, which NCCL
        # initialises for bootstrap whatever it then selects (NCCL 2.4 logs `NET/Socket : Using` beside
        # aws-ofi-nccl's `Selected Provider is efa`).
        touched = list(self.networks)
        plugin_nets = [n for n in touched if pat.is_plugin_network(n) or pat.network_kind(n) == "ofi"]
        if plugin_nets:
            return plugin_nets[0]
        if self.att.ofi_provider or (self.att.net_plugin or "").startswith("aws-ofi-nccl"):
            return None  # aws-ofi-nccl set up; what it carried is the doctor's call (ofi_evidence)
        # NCCL's own order: IB when it found a device, else Socket. NCCL 2.4 initialises Socket first for
        # bootstrap whatever it selects (init.cc initNet: "Always initialize sockets as we use it for
        # bootstrap", then IB), so `NET/Socket : Using` before `NET/IB : Using` is not the socket transport.
        ib = [n for n in touched if pat.network_kind(n) == "ib"]
        return ib[0] if ib else touched[0] if touched else None

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
