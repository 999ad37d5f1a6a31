"""`soma-kernel describe FILE [--json] [--faces]`: how a program is built, in prose or JSON."""

from __future__ import annotations

import argparse
import json
import sys

from ..analysis.describe import card_header, describe_card, describe_json, faces_text
from .program import load_program


def run(args: argparse.Namespace) -> int:
    """Print the description; exit 1 when the file cannot be loaded."""
    loaded = load_program(args.file, with_project=False)
    if loaded is None:
        return 1
    program, path = loaded.program, args.file
    if args.json:
        data = describe_json(program, path)
        if args.faces:
            data["cells"] = [{k: c[k] for k in ("name", "face", "memory", "state_machines")} for c in data["cells"]]
        print(json.dumps(data, indent=2, ensure_ascii=False))
    elif args.faces:
        sys.stdout.write(faces_text(program, path))
    else:
        sys.stdout.write(f"{card_header(program, path)}\n\n{describe_card(program)}")
    return 0
