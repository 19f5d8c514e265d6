from __future__ import annotations

import pytest

from benchwright.coding.grading.policies import GroupCount, PassPolicy, all_verdicts, passes
from benchwright.coding.problems.config import Group

C, F, E, R = Group.CORE, Group.FUNCTIONALITY, Group.ERROR, Group.REGRESSION


def counts(**groups: tuple[int, int]) -> dict[Group, GroupCount]:
    names = {"core": C, "func": F, "err": E, "reg": R}
    return {names[k]: GroupCount(passed=p, total=t) for k, (p, t) in groups.items()}


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        # core-cases, all-non-error-cases, all-cases, any-core-cases, any-case, any
        (counts(core=(3, 3), func=(1, 2), err=(0, 1)), [1, 0, 0, 1, 1, 1]),
        (counts(core=(3, 3), func=(2, 2), reg=(5, 5), err=(0, 1)), [1, 1, 0, 1, 1, 1]),
        (counts(core=(3, 3), func=(2, 2), err=(1, 1)), [1, 1, 1, 1, 1, 1]),
        (counts(core=(2, 3), func=(2, 2)), [0, 0, 0, 1, 1, 1]),
        (counts(func=(2, 2)), [0, 1, 1, 0, 1, 1]),
        (counts(core=(0, 2), err=(0, 1)), [0, 0, 0, 0, 0, 1]),
        ({}, [0, 0, 0, 0, 0, 1]),
    ],
)
def test_policy_table(case: dict[Group, GroupCount], expected: list[int]) -> None:
    order = [PassPolicy.CORE_CASES, PassPolicy.ALL_NON_ERROR_CASES, PassPolicy.ALL_CASES,
             PassPolicy.ANY_CORE_CASES, PassPolicy.ANY_CASE, PassPolicy.ANY]
    assert [int(passes(p, case, False)) for p in order] == expected


def test_infrastructure_failure_fails_every_policy() -> None:
    verdicts = all_verdicts(counts(core=(3, 3)), infrastructure_failure=True)
    assert not any(verdicts.values())
