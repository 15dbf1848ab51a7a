"""Reading NCCL's debug logs (``NCCL_DEBUG=INFO``, any NCCL from 2.4 to 2.28, any launcher's prefixes)
into an ``Attestation``: which transports, networks and plugins the ranks really used, with the lines that
prove each claim. Reading only: judging the evidence is the doctor's (``gpufabric.analysis``), and the
A/B, tune, isolate and every bench run call ``attest_files`` on the logs their ranks wrote.

- ``attest``: streams a log in bounded memory (``attest_files``, ``attest_lines``);
- ``patterns``: the line shapes; ``templates``: what one distinct line does; ``state``: the attestation
  being built; ``claims``: the structured claims (proven / inferred / unknown) and the host facts
  (``multi_host``, ``virtual_only``) the doctor's checks read.
"""

from typing import TYPE_CHECKING

from gpufabric._lazy import lazy_package

if TYPE_CHECKING:  # the public names, each imported on first use (gpufabric._lazy)
    from gpufabric.nccl_logs.attest import attest_files, attest_lines
    from gpufabric.nccl_logs.claims import (
        build_claims,
        multi_host,
        physical_hosts,
        plugin_state,
        virtual_only,
    )
lazy_package(__name__)

__all__ = [
    "attest_files",
    "attest_lines",
    "build_claims",
    "multi_host",
    "physical_hosts",
    "plugin_state",
    "virtual_only",
]
