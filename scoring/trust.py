"""What scoring believes of a rollout's server labels and signed domain, given what it scores.

The readers believe a label only when the server signed it for its rollout's session and call
index (`scoring.chat.Labels`); here the rollout is held to the task it is scored on (a fault
bound to another task is the agent's failed call) and its signed domain identity (name, version,
fingerprint) to the domain it is scored against (a difference is said, never silent). Every
label or claim not believed is said in the report's warnings.
"""

from __future__ import annotations

from simulator import Domain

from .rollout import Rollout, RolloutCall

#: How many reasons for ignored labels a warning names.
NAMED_REASONS = 5


def bind_task(rollout: Rollout, task_id: str) -> Rollout:
    """The rollout with its faults believed only when their labels are bound to `task_id`."""
    bound, views = bind_faults(rollout, rollout.faults(), task_id)
    if bound is rollout:
        return rollout
    calls = list(rollout.calls)
    for i, call in views.items():
        calls[i] = call
    return bound.model_copy(update={"calls": calls})


def bind_faults(
    rollout: Rollout, faults: list[tuple[int, RolloutCall]], task_id: str
) -> tuple[Rollout, dict[int, RolloutCall]]:
    """Faults believed only when their labels are bound to `task_id`: the rollout (the same one when
    nothing changes, else a copy saying which labels were ignored) and each faulted call as scored
    ({index: call}; the agent's failed call where its label is for another task)."""
    if not faults or rollout.label_task == task_id:
        return rollout, dict(faults)
    why = [
        f"call {i} ({call.name}): its label is for task {rollout.label_task!r}, not {task_id!r} (scored)"
        for i, call in faults
    ]
    bound = rollout.model_copy(
        update={
            "label_task": None,
            "unverified_labels": rollout.unverified_labels + len(faults),
            "ignored_labels": [*rollout.ignored_labels, *why],
        }
    )
    return bound, {i: _unlabelled(call) for i, call in faults}


def _unlabelled(call: RolloutCall) -> RolloutCall:
    """A call whose label is not believed: a voided call stands as recorded, a fault is the agent's."""
    if call.voided:
        return call.model_copy(update={"outcome": "ok", "fault": None, "voided": False, "error": None})
    return call.model_copy(update={"outcome": "tool-error", "fault": None})


def domain_warnings(domain: Domain, rollout: Rollout) -> list[str]:
    """A warning when the domain scored is not the one the server signed the rollout on."""
    if not rollout.signed_domain or rollout.fingerprint == domain.fingerprint():
        return []
    return [
        f"the server signed this rollout as recorded on {rollout.domain}@{rollout.version} (fingerprint "
        f"{rollout.fingerprint}); it is scored on {domain.ref} (fingerprint {domain.fingerprint()}), "
        "whose content differs from what the agent saw"
    ]


def label_warnings(rollout: Rollout) -> list[str]:
    """What the transcript claimed that was not believed: ignored labels (with why), then the rest."""
    out = []
    if rollout.unverified_labels:
        reasons = rollout.ignored_labels[:NAMED_REASONS]
        more = len(rollout.ignored_labels) - len(reasons) + rollout.ignored_more
        said = "; ".join(reasons) + (f"; and {more} more" if more > 0 else "")
        out.append(
            f"{rollout.unverified_labels} infrastructure label(s) were ignored, so those calls count as the "
            "agent's failed calls" + (f": {said}" if said else "")
        )
    return out + rollout.distrusted
