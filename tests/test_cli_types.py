"""Option types shared by the command-line tools: a non-positive value is argparse's error (exit 2), named."""
import pytest

from local_models.bin import speech_to_units, text_to_speech
from local_models.common.cli import positive


def test_positive_parses_and_rejects():
    assert positive(float)("0.5") == 0.5 and positive(int)("3") == 3
    assert positive(int)("1" + "0" * 400) == 10 ** 400  # an int is finite however large (no OverflowError)
    for bad in ("0", "-1", "nan", "inf"):
        with pytest.raises(Exception, match="must be a finite number > 0"):
            positive(float)(bad)
    with pytest.raises(Exception, match="not a valid int"):
        positive(int)("1.5")


@pytest.mark.parametrize("parser, argv, opt", [
    (text_to_speech.get_parser, ["-m", "x", "--text", "hola", "-o", "o.wav", "--speed", "0"], "--speed"),
    (speech_to_units.get_parser, ["a.wav", "-m", "x", "--max-chunk-s", "-2"], "--max-chunk-s"),
])
def test_tools_refuse_non_positive_values(parser, argv, opt, capsys):
    with pytest.raises(SystemExit) as e:
        parser().parse_args(argv)
    assert e.value.code == 2
    assert f"argument {opt}: must be a finite number > 0" in capsys.readouterr().err
