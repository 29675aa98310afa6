"""The progress bar of long work: rate and time left on a terminal, nothing elsewhere."""

import io

from privrelease.cli.progress import ProgressBar


class Terminal(io.StringIO):
    def isatty(self):
        return True


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_bar_shows_share_rate_and_time_left_on_a_terminal():
    out, clock = Terminal(), Clock()
    bar = ProgressBar(out, width=10, clock=clock)
    bar.total = 1000
    bar("pass 1", 0)
    clock.t = 2.0
    bar("pass 1", 250)
    last = out.getvalue().split("\r")[-1]
    assert "[##........]  25% 250/1,000 rows  125 rows/s  6s left" in last
    clock.t = 2.01
    bar("pass 1", 260)  # too soon after the last redraw: not drawn
    assert "260/" not in out.getvalue()
    bar("pass 2", 100)  # a new stage ends the previous line
    assert "\n\r  pass 2" in out.getvalue()
    bar.close()
    assert out.getvalue().endswith("\n")


def test_bar_without_a_total_shows_count_and_rate():
    out, clock = Terminal(), Clock()
    bar = ProgressBar(out, clock=clock)
    bar("writing", 0)
    clock.t = 1.0
    bar("writing", 5000)
    assert out.getvalue().split("\r")[-1].startswith("  writing      5,000 rows  5,000 rows/s")


def test_bar_is_quiet_when_not_a_terminal():
    out = io.StringIO()
    bar = ProgressBar(out)
    bar.total = 10
    bar("pass 1", 5)
    bar.close()
    assert out.getvalue() == ""


def test_release_passes_the_total_and_reports_every_pass(tmp_path, small_schema, small_df):
    from privrelease import release_file

    data = tmp_path / "d.csv"
    small_df.to_csv(data, index=False)

    class Recorder(ProgressBar):
        def __init__(self):
            super().__init__(Terminal(), min_interval=0.0)
            self.calls = []

        def __call__(self, stage, n):
            self.calls.append((stage, n, self.total))

    rec = Recorder()
    release_file(data, small_schema, tmp_path / "o.csv", "laplace", 1.0, rng=0, chunk_rows=64, progress=rec)
    assert all(total == 200 for _, _, total in rec.calls)
    stages = {s for s, _, _ in rec.calls}
    assert "writing" in stages and ("reading" in stages or "statistics" in stages)
    assert ("writing", 200, 200) in rec.calls


def test_a_declared_progress_is_told_the_total_once_before_any_stage(tmp_path, small_schema, small_df):
    """The total reaches a :class:`Progress` through its declared ``start(total)``, once, before the first
    stage (it used to be set only on objects found to have a ``total`` attribute)."""
    from privrelease import release_file
    from privrelease.release.progress import Progress

    class Recorder(Progress):
        def __init__(self):
            self.calls = []

        def start(self, total):
            self.calls.append(("start", total))

        def __call__(self, stage, rows):
            self.calls.append((stage, rows))

    data = tmp_path / "d.csv"
    small_df.to_csv(data, index=False)
    rec = Recorder()
    release_file(data, small_schema, tmp_path / "o.csv", "laplace", 1.0, rng=0, chunk_rows=64, progress=rec)
    assert rec.calls[0] == ("start", 200)
    assert [c for c in rec.calls if c[0] == "start"] == [("start", 200)]
    assert ("writing", 200) in rec.calls


def test_a_plain_callable_keeps_its_own_total_attribute(tmp_path, small_schema, small_df):
    """Pins the probe ``if hasattr(progress, "total"): progress.total = n``: a plain callable that happened
    to have an attribute named ``total`` (here its own running count) had it overwritten with the number
    of records. A plain callable now only receives ``(stage, rows)``."""
    from privrelease import release_file

    class Counter:
        def __init__(self):
            self.total = 0  # its own running count of calls: not the number of records
            self.stages = []

        def __call__(self, stage, rows):
            self.total += 1
            self.stages.append(stage)

    data = tmp_path / "d.csv"
    small_df.to_csv(data, index=False)
    counter = Counter()
    release_file(data, small_schema, tmp_path / "o.csv", "laplace", 1.0, rng=0, chunk_rows=64, progress=counter)
    assert counter.stages and counter.total == len(counter.stages)
