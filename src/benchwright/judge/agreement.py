"""How K samples of the same requests agree, per rubric item, and which flags they keep.

- Matching: within one item and file, a sample's flag joins the first group whose first flag
  starts within 2 lines of it and that holds no flag of that sample yet; else it starts a group.
- Consensus: a group raised by more than half of the samples is kept (its first flag stands for
  it); with one sample every flag is kept.
- Agreement: Krippendorff's alpha (nominal) with every line of every judged file as a unit and
  each sample as a coder saying whether the item covers that line; computed by the maintained
  `krippendorff` package from the lines' counts, pooled over checkpoints. None when no sample
  flagged the item at all (alpha is undefined without variation).
- Stability: the mean, over groups, of the share of samples that raised the group (1.0: every
  flag was raised by every sample).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from benchwright.extras import import_extra
from benchwright.judge.flags import LINE_TOLERANCE
from benchwright.judge.models import CriterionAgreement, SupportCounts
from benchwright.judge.verdicts import Flag


@dataclass
class Group:
    """The flags of several samples taken as one."""

    first: Flag
    """The first flag met (lowest sample)."""
    samples: set[int] = field(default_factory=set)
    """The samples that raised it."""


def group_flags(per_sample: list[list[Flag]]) -> list[Group]:
    """Every sample's flags, matched into groups (in sample order)."""
    groups: list[Group] = []
    for sample, flags in enumerate(per_sample):
        for flag in flags:
            home = next((g for g in groups if sample not in g.samples
                         and g.first.criteria == flag.criteria
                         and g.first.file_name == flag.file_name
                         and abs(g.first.start - flag.start) <= LINE_TOLERANCE), None)
            if home is None:
                groups.append(Group(first=flag, samples={sample}))
            else:
                home.samples.add(sample)
    return groups


def consensus(groups: list[Group], samples: int) -> list[Flag]:
    """The flags raised by more than half of the samples."""
    return [g.first for g in groups if 2 * len(g.samples) > samples]


def support_counts(per_sample: list[list[Flag]], groups: list[Group], criteria: list[str],
                   file_lines: dict[str, int], samples: int) -> dict[str, SupportCounts]:
    """Per item: lines by how many samples flagged them, groups by how many raised them."""
    found = {}
    total_lines = sum(file_lines.values())
    for name in criteria:
        covered: dict[tuple[str, int], set[int]] = {}
        for sample, flags in enumerate(per_sample):
            for flag in (f for f in flags if f.criteria == name):
                for line in range(flag.start, flag.end + 1):
                    covered.setdefault((flag.file_name, line), set()).add(sample)
        lines = [0] * (samples + 1)
        for raisers in covered.values():
            lines[len(raisers)] += 1
        lines[0] = total_lines - sum(lines[1:])
        by_group = [0] * (samples + 1)
        for group in (g for g in groups if g.first.criteria == name):
            by_group[len(group.samples)] += 1
        found[name] = SupportCounts(lines=lines, flags=by_group)
    return found


def pooled(counts: list[SupportCounts]) -> SupportCounts:
    """Counts of one item summed over checkpoints (all with the same number of samples)."""
    width = max(len(c.lines) for c in counts)
    return SupportCounts(lines=[sum(c.lines[k] for c in counts if k < len(c.lines))
                                for k in range(width)],
                         flags=[sum(c.flags[k] for c in counts if k < len(c.flags))
                                for k in range(width)])


def alpha(counts: SupportCounts) -> float | None:
    """Krippendorff's alpha over the lines (nominal: flagged or not)."""
    samples = len(counts.lines) - 1
    if samples < 2 or sum(counts.lines[1:]) == 0:
        return None
    np = import_extra("numpy", "judge", "agreement across samples")
    krippendorff = import_extra("krippendorff", "judge", "agreement across samples")
    rows = np.repeat(np.array([[samples - k, k] for k in range(samples + 1)]),
                     counts.lines, axis=0)
    try:
        return round(float(krippendorff.alpha(value_counts=rows,
                                              level_of_measurement="nominal")), 4)
    except ValueError:  # one value only: every sample flagged every line
        return None


def stability(counts: SupportCounts) -> float | None:
    """The mean share of samples that raised a flag; None without flags."""
    samples = len(counts.flags) - 1
    groups = sum(counts.flags)
    if samples < 1 or groups == 0:
        return None
    return round(sum(k * n for k, n in enumerate(counts.flags)) / (samples * groups), 4)


def agreement_table(per_checkpoint: list[dict[str, SupportCounts]]) -> list[CriterionAgreement]:
    """Per item, the samples' agreement pooled over checkpoints (items never judged with two
    samples or more are left out)."""
    by_name: dict[str, list[SupportCounts]] = {}
    for counts in per_checkpoint:
        for name, support in counts.items():
            by_name.setdefault(name, []).append(support)
    table = []
    for name in sorted(by_name):
        total = pooled(by_name[name])
        samples = len(total.lines) - 1
        table.append(CriterionAgreement(
            criterion=name, samples=samples, lines=sum(total.lines),
            lines_flagged=sum(total.lines[1:]), flags=sum(total.flags),
            flags_kept=sum(n for k, n in enumerate(total.flags) if 2 * k > samples),
            alpha=alpha(total), stability=stability(total)))
    return table
