"""Pass policies: the one place that decides whether a graded checkpoint passed.

SCBench has two implementations that disagree (one requires Core tests to exist, one does not;
one checks infrastructure failures, one does not). benchwright has this one:

- every policy fails when grading hit an infrastructure failure;
- an "all" policy needs at least one test in its scope, and every test in scope passed;
- an "any" policy needs at least one passed test in its scope.

| policy              | scope                                | rule         |
|---------------------|--------------------------------------|--------------|
| core-cases          | Core                                 | all passed   |
| all-non-error-cases | Core, Functionality, Regression      | all passed   |
| all-cases           | every test                           | all passed   |
| any-core-cases      | Core                                 | one passed   |
| any-case            | every test                           | one passed   |
| any                 | -                                    | always       |
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from pydantic import BaseModel, Field, model_validator

from benchwright.coding.problems.config import Group


class PassPolicy(StrEnum):
    """The pass policies, named as SCBench names them."""

    CORE_CASES = "core-cases"
    ALL_NON_ERROR_CASES = "all-non-error-cases"
    ALL_CASES = "all-cases"
    ANY_CORE_CASES = "any-core-cases"
    ANY_CASE = "any-case"
    ANY = "any"


class GroupCount(BaseModel):
    """Passed and total tests of one group."""

    passed: int = Field(default=0, ge=0)
    """Tests that passed (or xpassed); never more than `total`."""
    total: int = Field(default=0, ge=0)
    """Tests counted: every collected item, parametrised cases separately, less those the
    problem set's grading leaves out (`TestCase.counted`)."""

    @model_validator(mode="after")
    def _passed_within_total(self) -> GroupCount:
        if self.passed > self.total:
            raise ValueError(f"passed ({self.passed}) is more than total ({self.total})")
        return self


_SCOPES: dict[PassPolicy, tuple[Group, ...]] = {
    PassPolicy.CORE_CASES: (Group.CORE,),
    PassPolicy.ALL_NON_ERROR_CASES: (Group.CORE, Group.FUNCTIONALITY, Group.REGRESSION),
    PassPolicy.ALL_CASES: tuple(Group),
    PassPolicy.ANY_CORE_CASES: (Group.CORE,),
    PassPolicy.ANY_CASE: tuple(Group),
    PassPolicy.ANY: (),
}
_ANY_RULE = {PassPolicy.ANY_CORE_CASES, PassPolicy.ANY_CASE}


def passes(
    policy: PassPolicy, counts: Mapping[Group, GroupCount], infrastructure_failure: bool
) -> bool:
    """Whether a checkpoint with these counts passes `policy`."""
    if infrastructure_failure:
        return False
    if policy is PassPolicy.ANY:
        return True
    scope = [counts.get(group, GroupCount()) for group in _SCOPES[policy]]
    passed = sum(c.passed for c in scope)
    total = sum(c.total for c in scope)
    if policy in _ANY_RULE:
        return passed > 0
    return total > 0 and passed == total


def all_verdicts(
    counts: Mapping[Group, GroupCount], infrastructure_failure: bool
) -> dict[PassPolicy, bool]:
    """The verdict of every policy."""
    return {p: passes(p, counts, infrastructure_failure) for p in PassPolicy}
