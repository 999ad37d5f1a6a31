"""`soma-kernel verify`: model checking, refinement, invariant proofs and the report.

Public entry points: `verify_program(program, project, path) -> VerifyReport`
(in `.report`'s data model, built by `.checks`), `render_text(report)` and
`render_json(report)`; the CLI is `.command.main(argv)`.
"""
