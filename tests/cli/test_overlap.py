"""``tcrex.distributed.Overlapped``: the model predicts batch k+1 while the caller works on batch k (explain, the
fit's recount); answers are read in order, once each, also when the caller stops early, and failures name their
batch."""
import pytest

from tcrex.distributed import Overlapped, numbered


class _Model:
    """Records the order of sends and answers; one request at a time, as a sandboxed model's worker serves them."""

    def __init__(self, fail_on=None):
        self.log, self.owed, self.fail_on = [], None, fail_on

    def start(self, frame):
        assert self.owed is None, "a batch was sent before the previous answer was read"
        self.log.append(("send", frame))
        self.owed = frame

        def answer():
            assert self.owed == frame, "answers read out of order or twice"
            self.owed = None
            self.log.append(("answer", frame))
            if frame == self.fail_on:
                raise ValueError(f"bad batch {frame}")
            return [2 * v for v in frame]
        return answer


def _frames():
    return [[1, 2], [3], [4, 5, 6]]


def test_each_batch_comes_with_its_outputs_after_the_next_batch_was_sent():
    model = _Model()
    seen = []
    for (rows, frame), outputs in Overlapped(numbered(_frames()), model.start):
        seen.append((rows, frame, outputs))
        model.log.append(("work", frame))
    assert seen == [((0, 2), [1, 2], [2, 4]), ((2, 3), [3], [6]), ((3, 6), [4, 5, 6], [8, 10, 12])]
    # batch k is worked on while batch k+1 is being predicted
    assert model.log == [("send", [1, 2]), ("answer", [1, 2]), ("send", [3]), ("work", [1, 2]), ("answer", [3]),
                         ("send", [4, 5, 6]), ("work", [3]), ("answer", [4, 5, 6]), ("work", [4, 5, 6])]


def test_a_caller_that_stops_early_still_reads_the_answer_it_is_owed():
    model = _Model()
    run = Overlapped(numbered(_frames()), model.start)
    with pytest.raises(RuntimeError):
        for (rows, frame), _ in run:
            if frame == [3]:
                raise RuntimeError("the explainer failed")
    run.close()
    assert model.owed is None  # [4, 5, 6] was sent while [3] was worked on, and its answer was read
    assert run.rows == (2, 3)  # the failure belongs to the batch being worked on


def test_a_failed_prediction_names_its_batch():
    model = _Model(fail_on=[3])
    run = Overlapped(numbered(_frames()), model.start)
    with pytest.raises(ValueError, match="bad batch"):
        for _ in run:
            pass
    assert run.rows == (2, 3)


def test_no_batches_no_outputs():
    assert list(Overlapped(numbered([]), _Model().start)) == []
