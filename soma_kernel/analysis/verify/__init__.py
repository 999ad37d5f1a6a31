"""`soma-kernel verify`: model checking, refinement, invariant proofs and the report.

Entry points for other components (the session's `%verify` report is drawn
from the structured report, counter-examples highlighted on the diagrams):
- `verify_program(program, project, path, strict=False) -> VerifyReport`
- `render_text(report) -> str` (exactly the CLI text), `render_json(report) -> str`
`gate.check_then_verify(...)` adds the `soma check` gate (the CLI and `%verify` call it).
"""

from .checks import verify_program
from .report import CheckGroup, CheckLine, MachineReport, Step, VerifyReport, render_json, render_text
from .temporal import TemporalResult

__all__ = [
    "verify_program", "render_text", "render_json", "VerifyReport", "MachineReport", "CheckLine",
    "CheckGroup", "Step", "TemporalResult",
]
