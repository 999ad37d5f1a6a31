"""State-machine diagrams: DOT, mermaid, plain text and the notebook bundle.

Every renderer reads the one `MachineModel` (soma_kernel.syntax.machines):
its states in declaration order and its expanded edges. Nothing here looks
at the AST except to print a guard through `render_expr`.

Conventions shared by all renderers:
- the initial state gets a start arrow;
- terminal states (no edge to another state) are double circles;
- an edge with a guard is labelled with the guard's source text;
- edges produced by a `* -> t` line are dashed and grey;
- `instances` ({state: count}) adds "N live" under a state's name;
- `highlight` (a list of states: an instance's path or a counter-example)
  draws those states and each step between consecutive ones in red.

`diagram_bundle` lays the DOT out as SVG under a time limit and shows it as
an `<img src="data:image/svg+xml;base64,…">` in text/html: JupyterLab's
sanitizer keeps such an image in an untrusted notebook (a freshly cloned or
shared one), where it strips an inline `<svg>` and does not render a bare
image/svg+xml output. The image's alt text names the machine, its size and
the highlighted path. A machine above the size limit, or one whose layout
times out, gets a message and a table of its edges instead; text/plain is
always the DOT source.
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence

from ..syntax.machines import MachineModel, ModelEdge
from ..syntax.render import render_expr
from . import svg

MAX_LAYOUT_STATES = 200
MAX_LAYOUT_EDGES = 300
MAX_TABLE_ROWS = 2000
HIGHLIGHT_COLOR = "#d62728"
WILDCARD_COLOR = "#888888"
LIVE_FILL = "#e8f1fb"


@dataclass(frozen=True)
class _View:
    """What the renderers need: the model plus instance counts and the highlight."""

    model: MachineModel
    edges: tuple[ModelEdge, ...]
    live: Mapping[str, int]
    path_states: frozenset[str]
    path_steps: frozenset[tuple[str, str]]


def _view(model: MachineModel, instances: Optional[Mapping[str, int]],
          highlight: Optional[Sequence[str]]) -> _View:
    """Collect the distinct edges (first declaration wins) and the highlight."""
    seen: set[tuple[str, str]] = set()
    edges = []
    for edge in model.edges:
        if (edge.src, edge.dst) not in seen:
            seen.add((edge.src, edge.dst))
            edges.append(edge)
    path = list(highlight or [])
    steps = {(a, b) for a, b in zip(path, path[1:]) if (a, b) in seen}
    live = {s: n for s, n in (instances or {}).items() if s in model.successors and n}
    return _View(model, tuple(edges), live, frozenset(s for s in path if s in model.successors),
                 frozenset(steps))


def guard_text(edge: ModelEdge) -> Optional[str]:
    """The guard of an edge as Soma source text, or None when it has none."""
    if edge.guard is None:
        return None
    return render_expr(edge.guard)


# ---------------------------------------------------------------- DOT

def _quote(text: str) -> str:
    """A DOT double-quoted string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _attrs(pairs: Iterable[tuple[str, str]]) -> str:
    """` [k=v, …]` for the pairs given, or nothing when there are none."""
    items = [f"{key}={value}" for key, value in pairs]
    return f" [{', '.join(items)}]" if items else ""


def _start_node_id(model: MachineModel) -> str:
    """An id for the invisible start point that no state uses."""
    name = "__start__"
    while name in model.successors:
        name += "_"
    return name


def _dot_node(view: _View, state: str, terminals: set[str]) -> str:
    """The DOT line declaring one state."""
    pairs: list[tuple[str, str]] = []
    if state in terminals:
        pairs.append(("shape", "doublecircle"))
    count = view.live.get(state)
    if count:
        pairs += [("label", _quote(f"{state}\n{count} live")), ("style", "filled"),
                  ("fillcolor", _quote(LIVE_FILL))]
    if state in view.path_states:
        pairs += [("color", _quote(HIGHLIGHT_COLOR)), ("fontcolor", _quote(HIGHLIGHT_COLOR)),
                  ("penwidth", "2.5")]
    return f"  {_quote(state)}{_attrs(pairs)};"


def _dot_edge(view: _View, edge: ModelEdge) -> str:
    """The DOT line of one edge."""
    pairs: list[tuple[str, str]] = []
    guard = guard_text(edge)
    if guard is not None:
        pairs.append(("label", _quote(f"[{guard}]")))
    if (edge.src, edge.dst) in view.path_steps:
        pairs += [("color", _quote(HIGHLIGHT_COLOR)), ("fontcolor", _quote(HIGHLIGHT_COLOR)),
                  ("penwidth", "2.5")]
    elif edge.wildcard:
        pairs += [("style", "dashed"), ("color", _quote(WILDCARD_COLOR)),
                  ("fontcolor", _quote(WILDCARD_COLOR))]
    return f"  {_quote(edge.src)} -> {_quote(edge.dst)}{_attrs(pairs)};"


def to_dot(model: MachineModel, instances: Optional[Mapping[str, int]] = None,
           highlight: Optional[Sequence[str]] = None) -> str:
    """The machine as Graphviz DOT source (deterministic: model order)."""
    view = _view(model, instances, highlight)
    terminals = set(model.terminal_states)
    start = _start_node_id(model)
    lines = [
        f"digraph {_quote(model.name)} {{",
        '  graph [rankdir=LR, fontname="Helvetica"];',
        '  node [shape=circle, fontname="Helvetica", fontsize=11];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    if model.initial:
        lines.append(f'  {_quote(start)} [shape=point, width=0.12, label=""];')
        lines.append(f"  {_quote(start)} -> {_quote(model.initial)};")
    lines += [_dot_node(view, state, terminals) for state in model.states]
    lines += [_dot_edge(view, edge) for edge in view.edges]
    lines.append("}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- mermaid

def to_mermaid(model: MachineModel, instances: Optional[Mapping[str, int]] = None,
               highlight: Optional[Sequence[str]] = None) -> str:
    """The machine as a mermaid `stateDiagram-v2`."""
    view = _view(model, instances, highlight)
    lines = ["stateDiagram-v2"]
    if model.initial:
        lines.append(f"    [*] --> {model.initial}")
    for state, count in sorted(view.live.items(), key=lambda kv: model.states.index(kv[0])):
        lines.append(f"    {state} : {state} ({count} live)")
    for edge in view.edges:
        guard = guard_text(edge)
        label = f" : [{_mermaid_text(guard)}]" if guard is not None else ""
        lines.append(f"    {edge.src} --> {edge.dst}{label}")
    lines += [f"    {state} --> [*]" for state in model.terminal_states]
    if view.path_states:
        marked = [s for s in model.states if s in view.path_states]
        lines.append(f"    classDef highlight stroke:{HIGHLIGHT_COLOR},stroke-width:3px")
        lines.append(f"    class {','.join(marked)} highlight")
    return "\n".join(lines) + "\n"


def _mermaid_text(text: str) -> str:
    """Guard text made safe for a mermaid transition label."""
    return text.replace(":", "#58;").replace(";", "#59;")


# ---------------------------------------------------------------- text

def to_text(model: MachineModel, instances: Optional[Mapping[str, int]] = None,
            highlight: Optional[Sequence[str]] = None) -> str:
    """The machine as a plain-text listing of states and edges."""
    view = _view(model, instances, highlight)
    terminals = set(model.terminal_states)
    lines = [f"state {model.name}: {len(model.states)} states, {len(view.edges)} edges,"
             f" initial '{model.initial}'"]
    for state in model.states:
        marks = [" (terminal)" if state in terminals else ""]
        if state in view.live:
            marks.append(f" [{view.live[state]} live]")
        if state in view.path_states:
            marks.append(" <- path")
        arrow = "->" if state == model.initial else "  "
        lines.append(f"  {arrow} {state}{''.join(marks)}")
    lines.append("  edges:")
    for edge in view.edges:
        lines.append(f"    {_edge_text(edge)}{' <- path' if (edge.src, edge.dst) in view.path_steps else ''}")
    return "\n".join(lines) + "\n"


def _edge_text(edge: ModelEdge) -> str:
    """`src -> dst`, with its guard and wildcard origin when it has them."""
    text = f"{edge.src} -> {edge.dst}"
    guard = guard_text(edge)
    if guard is not None:
        text += f" [guard: {guard}]"
    if edge.wildcard:
        text += f" (from * -> {edge.dst})"
    return text


# ---------------------------------------------------------------- bundle

def diagram_bundle(model: MachineModel, instances: Optional[Mapping[str, int]] = None,
                   highlight: Optional[Sequence[str]] = None,
                   timeout: float = svg.DEFAULT_TIMEOUT) -> dict:
    """The mime bundle a notebook shows for a machine.

    {"text/html": the drawing as an `<img>`, "text/plain": dot} normally; when
    the machine is too large or its layout exceeds `timeout` seconds (or no
    renderer is installed), {"text/html": message + edge table, "text/plain": dot}.
    """
    dot = to_dot(model, instances, highlight)
    edge_count = len(_view(model, None, None).edges)
    if len(model.states) > MAX_LAYOUT_STATES or edge_count > MAX_LAYOUT_EDGES:
        reason = (f"state machine '{model.name}' has {len(model.states)} states and {edge_count}"
                  f" edges, more than a diagram can show (limit {MAX_LAYOUT_STATES} states,"
                  f" {MAX_LAYOUT_EDGES} edges); its edges are listed instead.")
        return _fallback_bundle(model, dot, reason, instances, highlight)
    try:
        image = svg.render_svg(dot, timeout)
    except svg.RenderTimeout:
        reason = (f"the layout of state machine '{model.name}' took longer than {timeout:g} s;"
                  " its edges are listed instead.")
        return _fallback_bundle(model, dot, reason, instances, highlight)
    except svg.RenderError as exc:
        reason = f"the diagram of state machine '{model.name}' could not be drawn ({exc}); its edges are listed instead."
        return _fallback_bundle(model, dot, reason, instances, highlight)
    return {"text/html": svg_image_html(image, drawing_description(model, highlight)), "text/plain": dot}


def svg_image_html(svg_text: str, description: str) -> str:
    """An SVG drawing as an `<img>` with a data URI (kept by notebook sanitizers) and `description` as alt text."""
    data = base64.b64encode(svg_text.encode("utf-8")).decode("ascii")
    return (f'<img class="soma-diagram" alt="{html.escape(description)}" '
            f'src="data:image/svg+xml;base64,{data}">\n')


def drawing_description(model: MachineModel, highlight: Optional[Sequence[str]] = None) -> str:
    """What a drawing shows, in words: the machine, its size, and the highlighted path if any."""
    edges = len(_view(model, None, None).edges)
    text = f"state machine {model.name}: {len(model.states)} states, {edges} edges, initial {model.initial}"
    if highlight:
        text += "; highlighted path " + " → ".join(highlight)
    return text


def _fallback_bundle(model: MachineModel, dot: str, reason: str,
                     instances: Optional[Mapping[str, int]],
                     highlight: Optional[Sequence[str]]) -> dict:
    """Message plus an HTML edge table; text/plain stays the DOT."""
    return {"text/html": edge_table_html(model, reason, instances, highlight), "text/plain": dot}


def edge_table_html(model: MachineModel, message: str = "",
                    instances: Optional[Mapping[str, int]] = None,
                    highlight: Optional[Sequence[str]] = None) -> str:
    """An HTML table of the machine's edges (at most MAX_TABLE_ROWS rows)."""
    view = _view(model, instances, highlight)
    parts = ['<div class="soma-machine">']
    if message:
        parts.append(f"<p><b>{html.escape(message)}</b></p>")
    parts.append(f"<p>initial: <code>{html.escape(model.initial)}</code>; terminal: "
                 + ", ".join(f"<code>{html.escape(s)}</code>" for s in model.terminal_states) + "</p>")
    parts.append("<table><thead><tr><th>from</th><th>to</th><th>guard</th><th>kind</th></tr></thead><tbody>")
    for edge in view.edges[:MAX_TABLE_ROWS]:
        parts.append(_edge_row(view, edge))
    parts.append("</tbody></table>")
    hidden = len(view.edges) - MAX_TABLE_ROWS
    if hidden > 0:
        parts.append(f"<p>… and {hidden} more edges (the DOT source in text/plain has them all).</p>")
    parts.append("</div>")
    return "\n".join(parts) + "\n"


def _edge_row(view: _View, edge: ModelEdge) -> str:
    """One `<tr>` of the edge table."""
    guard = guard_text(edge)
    kind = f"* -> {edge.dst}" if edge.wildcard else ""
    style = f' style="color:{HIGHLIGHT_COLOR};font-weight:bold"' if (edge.src, edge.dst) in view.path_steps else ""
    cells = [_state_cell(view, edge.src), _state_cell(view, edge.dst),
             html.escape(guard) if guard is not None else "", html.escape(kind)]
    return f"<tr{style}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def _state_cell(view: _View, state: str) -> str:
    """A state name for the table, with its live count."""
    text = html.escape(state)
    if state in view.live:
        text += f" ({view.live[state]} live)"
    return text
