"""What each keyword means, in one line: what `?word` shows in a notebook.

`KEYWORD_HELP` has exactly the words of the keyword table (`keywords.KEYWORDS`, itself held equal to the
grammar's word literals by a test), so a keyword added to the grammar without its help fails the tests;
`TYPE_HELP` and `SLOT_PROPERTY_HELP` cover that module's `TYPES` and `SLOT_PROPERTIES` the same way.
Each line says what the implementation does, the form first.
"""

from __future__ import annotations

KEYWORD_HELP: dict[str, str] = {
    # declarations and cell sections
    "cell": "cell Name { face { } memory { } state m { } on handler(…) { } } — a unit of state and behaviour",
    "agent": "cell agent Name { … } — a cell whose handlers may call think()/approve() and whose face declares tools",
    "skeleton": "skeleton agent Name { … } — signals with frames (calls/writes/reads/moves); bodies in `flesh`",
    "flesh": "flesh Name { on signal(params) { … } } — the bodies of a skeleton agent's signals (parameter types "
             "come from the signals)",
    "type": "cell type Name { variants { A  B { field: T }  C(T) } } — a sum type",
    "test": "cell test Name { rules { assert …  assert_fails …  mock think … } } — run by %test and soma test",
    "use": "use lib::module — loads lib/module.cell beside the program (in a notebook: ignored, use %load FILE.cell)",
    "variants": "variants { A  B { field: T }  C(T) } — the variants of a `cell type`: unit, struct or tuple",
    "face": "face { signal name(p: T) -> R  tool …  promise \"…\" } — a cell's public contract",
    "signal": "signal name(p: T) -> R — a face entry a handler `on name` must implement, its return type checked; "
              "in a skeleton agent followed by its frame (calls, writes, reads, moves)",
    "tool": "tool name(p: T) -> R \"description\" — in an agent's face: a handler the model may call from think() "
            "(offered with a JSON schema; `tools_allowed` narrows it); `mock think tool name(p: v)` scripts such a call",
    "promise": "promise all_persistent / promise \"text\" — a face promise: part of the contract describe "
               "lists; soma-kernel does not check it",
    "memory": "memory { slot: Map<K, V> [persistent]  invariant expr } — a cell's state",
    "invariant": "invariant expr — in memory { }: checked before each write to the slots it names (every slot "
                 "when it names none: set, index write, push; delete when it reads size), with the slot's name bound to the value being written; "
                 "a write that breaks it is refused (kind invariant) and the invocation rolls back",
    "state": "state name { initial: s  a -> b  b -> c { guard { expr } }  * -> failed except [c] } — the cell's "
             "state machine; transition(id, to) moves an instance",
    "initial": "initial: s — the state every machine instance starts in (exactly one per `state` block)",
    "on": "on name(p: T) { body } — a handler (a leading _ makes it private)",
    "every": "every 30s { body } — a body the reference's server runs on a timer; soma-kernel checks it "
             "(names, calls, cost) but never runs it, nor does soma test",
    "after": "after 5s { body } — a body the reference's server runs once after the delay; soma-kernel checks "
             "it but never runs it, nor does soma test",
    "cost": "cost { tokens: N  latency: 2s  usd: 0.01 } — an agent's declared cost; soma check proves the token "
            "bound from each think()'s literal max_tokens and max_rounds",
    "rules": "rules { let …  assert …  assert_fails …  mock …  property … } — the body of a `cell test`",
    "interior": "interior { cell … } — nested cells of the reference's research features: parsed, then ignored",
    "scale": "scale { replicas: 3 … } — deployment settings the reference reads: parsed, then ignored here",
    "runtime": "runtime { … } — deployment settings the reference reads: parsed, then ignored here",
    # clauses of a signal, an edge, a tool or a loop
    "calls": "calls think, other_signal — a skeleton signal's frame: the effectful builtins and handlers its "
             "body may call",
    "writes": "writes slot, … — a skeleton signal's frame: the memory slots its body may write",
    "reads": "reads slot, … — a skeleton signal's frame: the memory slots its body may read",
    "moves": "moves a -> b, … — a skeleton signal's frame: the machine edges its body may take",
    "guard": "a -> b { guard { expr } } — an edge taken only when expr is true (else kind guard_failed); it reads "
             "the calling handler's locals, the cell's slots, _id, _from and _to",
    "except": "* -> failed except [paid, done] — a wildcard edge from every state but those listed",
    "capability": "tool f(…) -> T [capability: \"https://api.example.com/*\"] \"…\" — what the tool's body may reach",
    "loop_bound": "while [loop_bound(N)] cond { … } / for [loop_bound(N)] x in xs { … } — a loop's declared "
                  "bound, for the cost proof",
    # statements and expressions
    "let": "let name = expr — a block-scoped local; at the top of a notebook cell it becomes a session variable",
    "if": "if cond { … } else { … } — also an expression; cond must be a Bool (() counts as false)",
    "else": "if c { … } else if c2 { … } else { … }; also `require cond else Tag`",
    "while": "while cond { … } — with break and continue; `while [loop_bound(N)] cond` declares its bound",
    "for": "for x in xs { … } — List elements, a Map's {key, value} entries, a String's lines, range(a, b)",
    "in": "for x in xs { … } / property \"p\" forall n in 0..10 ensures … — what the loop or property ranges over",
    "match": "match value { Pattern -> expr  Pattern if cond -> expr  _ -> expr }",
    "try": "try { block } — a Map {value, error, kind, detail} instead of an error; the block's writes are undone "
           "when it fails",
    "return": "return [expr] — leave the handler with the value (bare: ()); not allowed inside a lambda",
    "break": "break — leave the innermost for/while loop",
    "continue": "continue — go on with the next round of the innermost for/while loop",
    "require": "require cond else Tag \"detail\" — fail with kind Tag when cond is false",
    "ensure": "ensure cond — a postcondition: fails with kind ensure when cond is false",
    "emit": "emit name(args) — call every handler listening for `name` (`on name(…)`), in this transaction",
    # test rules
    "assert": "assert expr — prints ✓ or ✗ as soma test does; a failing assert fails its cell",
    "assert_fails": "assert_fails expr [matching \"text\"] — ✓ when expr raises (the text in its kind or message)",
    "matching": "assert_fails expr matching \"text\" — the error's kind or message must contain the text",
    "mock": "mock think \"reply\" / mock approve true — script the next model or human answer; "
            "mock think tool name(arg: value, …) — the model asks for a tool (the real handler answers), "
            "then the next mock think is its final text; mock Handler value / mock now 1700000000",
    "error": "mock think error \"msg\" / mock Handler error \"kind: msg\" — the scripted call fails with that error",
    "property": "property \"name\" forall n: Int in 0..100 ensures expr — checked on every value (≤ 20 000), "
                "else on 50 fixed-seed samples",
    "forall": "property \"p\" forall n: Int in lo..hi ensures expr — the variable the property ranges over",
    "ensures": "property \"p\" forall n in lo..hi ensures expr — what must hold for each value",
    # literal words
    "true": "true — the Bool literal",
    "false": "false — the Bool literal",
}

TYPE_HELP: dict[str, str] = {
    "Int": "Int — a whole number (exact, any size); a whole Float is not an Int",
    "Float": "Float — a floating-point number; an Int written into a Float slot or field becomes a Float",
    "String": "String — text; \"…{expr}…\" interpolates, \"\"\"…\"\"\" spans lines",
    "Bool": "Bool — true or false; conditions must be Bools (() counts as false)",
    "List": "List<T> — an ordered list; a List slot checks each element written against T",
    "Map": "Map<K, V> — keys to values (a slot's keys are text: 1 and \"1\" are one key); also takes records, "
           "variants and ()",
    "Any": "Any — a parameter or field that takes any value",
    "Unit": "Unit — the type of (), the empty value",
}

SLOT_PROPERTY_HELP: dict[str, str] = {
    "persistent": "slot: Map<K, V> [persistent] — kept in .soma_data/<program>.sqlite by soma-kernel run and by a "
                  "notebook bound with %store; under soma test every slot starts empty",
    "ephemeral": "slot: Map<K, V> [ephemeral] — the default: the slot starts empty on every run",
    "capacity": "slot: Map<K, V> [capacity(n)] — a declared size: soma check reads it for contradictions; "
                "soma-kernel does not enforce it",
    "ttl": "slot: Map<K, V> [ttl(30d)] — a declared time to live: soma check refuses a ttl shorter than retain; "
           "soma-kernel does not expire entries",
    "consistency": "slot: Map<K, V> [consistent | eventual | local] — a declared consistency mode (one at most); "
                   "soma-kernel runs one process, where all three are the same",
    "native": "on f(x: Int) [native] { … } — an annotation the reference compiles natively; soma-kernel "
              "interprets the handler like any other",
}
