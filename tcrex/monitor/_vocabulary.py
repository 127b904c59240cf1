"""What a monitor speaks of: each person's status between two versions, the alert kinds, the per-person frame's
columns and the record formats."""
from __future__ import annotations

#: The JSON forms of a run and of a history (``RunResult.to_json``, ``History.to_json``): versioned plain data.
RUN_FORMAT = "tcrex-monitor-run"
HISTORY_FORMAT = "tcrex-monitor-history"
VERSION = 1

# ------------------------------------------------------------------------------------------------ statuses
#: Needed recourse under the previous version and still does; the advice they hold is confirmed by the new model.
KEPT = "kept"
#: Needed recourse under the previous version and still does; the new model rejects the advice they hold (fresh
#: verified recourse was searched for them: ``verified`` says whether it was found).
INVALIDATED = "invalidated"
#: Needed recourse under both versions, held no verified advice under the previous one and has it now.
GAINED = "gained"
#: Had the favourable outcome under the previous version and needs recourse under this one (fresh recourse was
#: searched for them: ``verified`` says whether it was found).
NEWLY_NEEDING = "newly_needing"
#: Needed recourse under the previous version and has the favourable outcome under this one.
NO_LONGER_NEEDING = "no_longer_needing"
#: Needed recourse under both versions and holds verified advice under neither.
STILL_NONE = "still_none"
#: Has the favourable outcome under both versions (also everyone who needs no recourse at the baseline).
NOT_NEEDING = "not_needing"
#: Every status, in display order; each person has exactly one per run.
STATUSES = (KEPT, INVALIDATED, GAINED, NEWLY_NEEDING, NO_LONGER_NEEDING, STILL_NONE, NOT_NEEDING)
STATUS_TEXT = {
    KEPT: "still needs recourse; the advice they hold still works under the new model",
    INVALIDATED: "still needs recourse; the new model rejects the advice they held",
    GAINED: "still needs recourse; had no verified advice before and has it now",
    NEWLY_NEEDING: "had the favourable outcome before; the new model rejects them",
    NO_LONGER_NEEDING: "needed recourse before; the new model gives them the favourable outcome",
    STILL_NONE: "needs recourse under both versions; no verified advice under either",
    NOT_NEEDING: "has the favourable outcome under both versions",
}
#: The baseline's statuses (no previous version): who needs recourse and whether their advice is verified.
BASELINE = "baseline"

# ------------------------------------------------------------------------------------------------ alerts
#: A group's verified-recourse share fell by more than the policy's threshold, its interval excluding zero.
SHARE_DROP = "share_drop"
#: The gap between a group and the reference group widened by more than the threshold, and is a clear gap now.
GAP_WIDENING = "gap_widening"
#: The share of the advice held that the new model rejects exceeded the threshold.
INVALIDATION = "invalidation_rate"
ALERT_KINDS = (SHARE_DROP, GAP_WIDENING, INVALIDATION)

#: The group standing for everyone in the per-group table (``feature`` None).
EVERYONE = "everyone"

# ------------------------------------------------------------------------------------------------ per person
#: Columns the monitor adds to the verified frame (``TCREx.counterfactuals(verify=True)``'s columns: the point's
#: features, ``valid``, ``source``, ``recourse``, ``changed``, ``n_changes``, ``rule``, ``recommended_rule``,
#: ``output``, ``text``): what happened to the person between the previous version and this one.
PERSON_COLUMNS = ("status", "needs_recourse", "verified", "previous_verified", "advice_holds", "person_output",
                  "target", "advice_version")
