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
