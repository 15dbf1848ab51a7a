"""OpenMPI's remote agent for a test bed: ``mpirun --mca plm_rsh_agent "python -m
gpufabric.testbed.rsh_agent RUNID"`` starts each node's daemon inside that node's namespace instead of
over ssh.

OpenMPI calls the agent as ``AGENT HOST COMMAND...`` (the command as words for a remote shell). HOST is
a node's address (the bed's hosts are addresses: they resolve everywhere and are what ``MASTER_ADDR``
needs); the agent finds the node, enters its namespace (``ip netns exec``) and a UTS namespace of its
own named after the address (every daemon would otherwise report this machine's one host name), sets
``GLOO_SOCKET_IFNAME``/``NCCL_SOCKET_IFNAME`` to the node's NIC for the ranks the daemon starts (mpirun's
``-x`` gives every rank the same value, and each node's NIC has its own name), and runs the command.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys

from gpufabric.testbed.names import DEFAULT_SUBNET, BedNames


def node_of(names: BedNames, host: str, nodes: int) -> int:
    for node in range(nodes):
        if names.address(node) == host:
            return node
    raise SystemExit(f"gpufabric.testbed.rsh_agent: {host!r} is not a node address of bed {names.run_id}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gpufabric.testbed.rsh_agent")
    parser.add_argument("run_id")
    parser.add_argument("--subnet", default=DEFAULT_SUBNET)
    parser.add_argument("--nodes", type=int, default=64)
    parser.add_argument("host")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    names = BedNames(args.run_id, args.subnet)
    node = node_of(names, args.host, args.nodes)
    nic = names.interface(node)
    script = f"hostname {shlex.quote(args.host)}; {' '.join(args.command)}"
    env = {**os.environ, "GLOO_SOCKET_IFNAME": nic, "NCCL_SOCKET_IFNAME": nic}
    argv_out = ["ip", "netns", "exec", names.namespace(node), "unshare", "--uts", "sh", "-c", script]
    os.execvpe(argv_out[0], argv_out, env)
    return 127  # not reached: exec replaces this process


if __name__ == "__main__":
    sys.exit(main())
