"""Settings for every test run here (tests/ and the nbval notebooks).

Kernels and sessions the tests start keep their input history in a file of
this run's own, never in the user's `~/.local/share/soma-kernel/history.sqlite`
(a developer's console would otherwise recall test inputs). A value already
set in the environment is kept.
"""

from __future__ import annotations

import os
import tempfile

_HISTORY_FOLDER = tempfile.TemporaryDirectory(prefix="soma-test-history-")
os.environ.setdefault("SOMA_KERNEL_HISTORY", os.path.join(_HISTORY_FOLDER.name, "history.sqlite"))
