"""Which scripted turn or fault answers each model call: the fake server's state, thread-safe."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from benchwright.testing.script import Fault, Script, Turn


@dataclass(frozen=True)
class Decision:
    """What to send for one call: a turn (with its number), a fault, or neither (exhausted)."""

    turn: Turn | None = None
    number: int | None = None
    fault: Fault | None = None


class Conductor:
    """Walks the script: faults first, fault-only turns skipped once spent, turns used once."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.fault_all = script.fault_all
        self.faults_cleared = False
        self.position = 0
        self.hits: dict[int, int] = {}
        self.lock = threading.Lock()

    def decide(self, declares_tools: bool) -> Decision:
        """The answer to the next model call."""
        with self.lock:
            if self.fault_all is not None:
                return Decision(fault=self.fault_all)
            if self.script.untooled is not None and not declares_tools:
                return Decision(turn=self.script.untooled)
            return self._next_turn()

    def _next_turn(self) -> Decision:
        while self.position < len(self.script.turns):
            turn, number = self.script.turns[self.position], self.position
            fault = turn.fault
            if fault is not None and not self.faults_cleared \
                    and self.hits.get(number, 0) < fault.times:
                self.hits[number] = self.hits.get(number, 0) + 1
                return Decision(number=number, fault=fault)
            self.position += 1
            if not turn.fault_only:
                return Decision(turn=turn, number=number)
        return Decision()

    def clear_faults(self) -> None:
        """Lift `fault_all` and every fault not yet spent."""
        with self.lock:
            self.fault_all = None
            self.faults_cleared = True

    def set_fault_all(self, fault: Fault | None) -> None:
        """Fail every model call with `fault` from now on (None lifts it)."""
        with self.lock:
            self.fault_all = fault
