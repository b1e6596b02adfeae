"""benchmarks/sad_vs_silero.py's goal lines (issue #51): half of silero-vad's DCF at both of its thresholds, at most
10 % of music and of tone time called speech; sound effects reported, not bounded."""
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("sad_vs_silero", ROOT / "benchmarks" / "sad_vs_silero.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def _row(dcf, **fa):
    return {"dcf": dcf, "fa": fa}


def test_goal_lines_judge_both_silero_rows_and_music_and_tone_only():
    out = {"rows": {"ours": _row(5.0, music=9.3, noise=16.7), "silero@0.5": _row(11.5), "silero@0.2": _row(8.06),
                    "silero@0.3": _row(9.0)},
           "silero_tuned": 0.2}
    lines = bench.goal_lines(out)
    assert len([x for x in lines if "DCF without collar" in x]) == 2  # the default and the dev-tuned row, no other
    assert any("silero@0.5's: ours 5.00 vs 11.50 (half: 5.75): met" in x for x in lines)
    assert any("silero@0.2's: ours 5.00 vs 8.06 (half: 4.03): NOT met" in x for x in lines)
    assert "- music time called speech at most 10 %: ours 9.30 %: met" in lines
    assert "- tone time called speech at most 10 %: not measured (this set has no tone)" in lines
    effects = [x for x in lines if "sound effects" in x]
    assert effects == ["- (not in the goal) sound effects called speech: ours 16.70 %"]
    out["rows"]["ours"] = _row(5.0, music=10.5, tone=3.0)
    lines = bench.goal_lines(out)
    assert "- music time called speech at most 10 %: ours 10.50 %: NOT met" in lines
    assert "- tone time called speech at most 10 %: ours 3.00 %: met" in lines
