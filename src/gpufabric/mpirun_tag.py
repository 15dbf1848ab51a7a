"""The tag ``mpirun --tag-output`` writes before every chunk of a rank's output: ``[1,0]<stdout>:``.

OpenMPI's ``[jobid,rank]<stream>:``, with no space after the colon. The mpirun launcher routes its ranks'
lines by it, the nccl-tests engine keeps rank 0's table by it, and the log readers peel it off pasted
logs; all three take it from here. A leaf module, so every layer can import it.

mpirun tags each chunk it reads, not each line, so a tag can also sit in the middle of a line (another
rank's chunk landed there): search with ``MPIRUN_TAG.search``/``split``, not only ``match``.
"""

from __future__ import annotations

import re

MPIRUN_TAG = re.compile(r"\[(?P<job>\d{1,9}),(?P<rank>\d{1,9})\]<(?P<stream>stdout|stderr|stddiag)>:")
"""Groups ``job``, ``rank`` and ``stream``; the digits are bounded so a hostile log stays linear."""
