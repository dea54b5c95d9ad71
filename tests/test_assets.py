"""assets.nltk_data_dir's staging: a failed build leaves nothing behind, and a process that
loses the race to the final folder keeps the winner's complete folder."""

from __future__ import annotations

import pytest

from genmetrics import GenmetricsError
from genmetrics.data import assets


def test_failed_build_leaves_no_staging_folder(tmp_path, monkeypatch):
    def broken(tmp, tagger, cache):
        (tmp / "half-written").write_text("x")
        raise GenmetricsError("wheel damaged")

    monkeypatch.setattr(assets, "_build_nltk_data", broken)
    with pytest.raises(GenmetricsError, match="wheel damaged"):
        assets.nltk_data_dir(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_losing_the_race_keeps_the_winners_folder(tmp_path, monkeypatch):
    final = tmp_path / "nltk_data"

    def build(tmp, tagger, cache):
        (tmp / tagger).mkdir(parents=True)
        (tmp / "mine").write_text("loser")
        final.mkdir()  # another process finished while this one was building
        (final / "theirs").write_text("winner")
        (final / ".complete").write_text("ok\n")

    monkeypatch.setattr(assets, "_build_nltk_data", build)
    assert assets.nltk_data_dir(tmp_path) == final
    assert sorted(p.name for p in final.iterdir()) == [".complete", "theirs"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nltk_data"]
    # complete: the next call returns it without building
    monkeypatch.setattr(assets, "_build_nltk_data", None)
    assert assets.nltk_data_dir(tmp_path) == final
