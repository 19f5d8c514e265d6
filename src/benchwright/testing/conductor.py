"""Which scripted turn or fault answers each model call: the fake server's state, thread-safe."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from benchwright.testing.script import Fault, Script, Turn


@dataclass(frozen=True)
class Decision:
    """What to send for one call: a turn (with its number), a fault, or neither (exhausted)."""

    turn: Turn | None = None
    number: int | None = None
    fault: Fault | None = None


@dataclass
class _Walk:
    """A list of turns served in order: faults first, fault-only turns skipped once spent."""

    turns: list[Turn]
    repeat_last: bool = False
    position: int = 0
    hits: dict[int, int] = field(default_factory=dict)

    def next(self, faults_cleared: bool) -> Decision:
        while self.position < len(self.turns):
            turn, number = self.turns[self.position], self.position
            fault = turn.fault
            if fault is not None and not faults_cleared and self.hits.get(number, 0) < fault.times:
                self.hits[number] = self.hits.get(number, 0) + 1
                return Decision(number=number, fault=fault)
            if not (self.repeat_last and number == len(self.turns) - 1):
                self.position += 1
            if not turn.fault_only:
                return Decision(turn=turn, number=number)
        return Decision()


class Conductor:
    """Walks the script: rules by the request's text, then `untooled`, then the turns in order."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.fault_all = script.fault_all
        self.faults_cleared = False
        self.turns = _Walk(list(script.turns))
        self.rules = [_Walk(list(rule.replies), repeat_last=True) for rule in script.rules]
        self.lock = threading.Lock()

    def decide(self, declares_tools: bool, text: str = "") -> Decision:
        """The answer to the next model call; `text` is what the request says (for rules)."""
        with self.lock:
            if self.fault_all is not None:
                return Decision(fault=self.fault_all)
            for rule, walk in zip(self.script.rules, self.rules, strict=True):
                if all(needle in text for needle in rule.match):
                    return walk.next(self.faults_cleared)
            if self.script.untooled is not None and not declares_tools:
                return Decision(turn=self.script.untooled)
            return self.turns.next(self.faults_cleared)

    def clear_faults(self) -> None:
        """Lift `fault_all` and every fault not yet spent."""
        with self.lock:
            self.fault_all = None
            self.faults_cleared = True

    def set_fault_all(self, fault: Fault | None) -> None:
        """Fail every model call with `fault` from now on (None lifts it)."""
        with self.lock:
            self.fault_all = fault
