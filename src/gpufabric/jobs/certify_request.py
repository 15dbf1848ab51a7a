"""What ``gpufabric certify`` is asked to do, with the command's defaults, as one model: calling the
library with a ``CertifyRequest`` gives what the command line gives. Node sources and launchers mean
what they mean for ``isolate`` (``node_names`` and ``launcher_name`` are isolate's own rules, through an
``IsolateRequest``), so the two commands accept the same nodes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import get_args

from gpufabric.errors import UsageError
from gpufabric.jobs.isolate_request import IsolateRequest
from gpufabric.launch.hostlist import SLURM_NODELIST
from gpufabric.launch.names import LAUNCHER_KINDS, RUNNING_LAUNCHERS, launcher_kind
from gpufabric.options import CertifyOptions
from gpufabric.options.isolate import ActionTarget

ACTION_TARGETS: tuple[str, ...] = get_args(ActionTarget)
"""Where --apply's changes go: auto is Slurm for --on slurm, else none."""
CERTIFY_LAUNCHERS: tuple[str, ...] = RUNNING_LAUNCHERS
# The node stage's sweep: a few sizes up to where busbw flattens, quick on CPU ranks.
NODE_MAX_GPU, NODE_MAX_CPU = "256M", "1M"


class CertifyRequest(CertifyOptions):
    """One ``gpufabric certify`` request: its fields and defaults are ``options.CertifyOptions``."""

    def isolate_request(self, **changes: object) -> IsolateRequest:
        """The isolate request of the same nodes and settings (node sources, launcher and the search)."""
        fields: dict[str, object] = dict(
            nodes=self.nodes,
            hostfile=self.hostfile,
            node_list=self.node_list,
            on=self.on,
            seed=self.seed,
            group_size=self.group_size,
            min_drop=self.min_drop,
            alpha=self.alpha,
            repeats=self.repeats,
            size=self.size,
            iters=self.iters,
            batch_seconds=self.batch_seconds,
            backend=self.backend,
            virtual_nodes=self.virtual_nodes,
        )
        fields.update(changes)
        return IsolateRequest.model_validate(fields)

    def node_names(self, environ: Mapping[str, str]) -> tuple[list[str], str]:
        """(node names, where they came from): isolate's rules, which search 2 nodes or more; a single
        node (certified alone: preflight, its own sweep) is read here."""
        single = self._single_node(environ)
        if single is not None:
            return single
        try:
            names, source = self.isolate_request().node_names(environ)
        except UsageError as exc:  # isolate's words, said for this command
            raise UsageError(str(exc).replace("isolate needs", "certify needs")) from exc
        if len(set(names)) != len(names):
            twice = sorted({n for n in names if names.count(n) > 1})
            raise UsageError(f"{source}: node(s) listed twice: {', '.join(twice)}; list each node once")
        return names, source.replace("isolate", "certify")

    def _single_node(self, environ: Mapping[str, str]) -> tuple[list[str], str] | None:
        if self.nodes == 1 and self.hostfile is None and self.node_list is None:
            return ["node0000"], "--nodes 1"
        if self.node_list is not None and self.nodes is None and self.hostfile is None:
            from gpufabric.textfile import read_text_file

            text = read_text_file(self.node_list, "--node-list")
            tokens = [
                t.removeprefix("pod/")
                for line in text.splitlines()
                for t in line.split("#", 1)[0].replace(",", " ").split()
            ]
            if len(tokens) == 1 and "[" not in tokens[0]:
                return tokens, f"--node-list {self.node_list}"
        kind = LAUNCHER_KINDS.get(self.on or "")  # not checked yet: launcher_name refuses a misspelt one
        allocation = environ.get(SLURM_NODELIST, "") if kind and kind.pins_nodes else ""
        given = (self.nodes, self.hostfile, self.node_list)
        if all(v is None for v in given) and allocation and not any(c in allocation for c in ",["):
            return [allocation], SLURM_NODELIST
        return None

    def launcher_name(self, node_source: str) -> str:
        if self.on not in (None, *CERTIFY_LAUNCHERS):
            raise UsageError(
                f"--on {self.on!r}: certify runs its jobs through {', '.join(CERTIFY_LAUNCHERS)}; for "
                "Kubernetes nodes run it over their hosts (--on mpirun --hostfile) and pass --actions "
                "kubernetes"
            )
        if self.mps and not self.virtual_nodes:
            raise UsageError("--mps: for virtual nodes sharing a GPU; add --virtual-nodes or drop --mps")
        name = self.isolate_request().launcher_name(node_source)
        if self.virtual_nodes and not launcher_kind(name).always_here:
            raise UsageError(
                f"--virtual-nodes: every node on this host (--on local); drop it with --on {name}"
            )
        return name

    def action_target(self, launcher: str) -> str:
        """Where actions go: ``actions``, or for auto Slurm's scontrol when the nodes are Slurm's."""
        if self.actions == "auto":
            return "slurm" if launcher == "slurm" else "none"
        return self.actions
