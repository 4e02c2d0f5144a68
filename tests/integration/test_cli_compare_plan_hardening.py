"""``compare`` and ``plan`` at the command line: every option listed does something or is
refused by name; texts without shingles match nothing; a sample too small to predict from is
said to be, and one that cannot be used at all is refused."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import click
import pytest

from neardup.cli.compare import NOT_FOR_COMPARE, compare_command
from neardup.cli.main import command_options, leaf_commands, main
from tests.conftest import SAMPLE
from tests.integration.conftest import run
from tests.io.test_warc import _warc

OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*[a-z0-9]")

TEXT_A = (
    "The runners were running quickly through the old park, and the dogs barked loudly at "
    "them! Afterwards, the tired runners rested under the tall trees; the dogs slept. "
) * 3
TEXT_B = (
    "The runners were running slowly through the new park, and the cats watched quietly from "
    "the walls! Afterwards, the tired runners rested under the tall trees; the cats slept. "
) * 3

HTML = (
    "<html><body><nav>home | about | contact | careers | press | blog</nav><main><p>{}</p>"
    "</main><footer>copyright the example company, all rights reserved</footer></body></html>"
)


def _texts(tmp: Path) -> list[str]:
    (tmp / "a.txt").write_text(TEXT_A, encoding="utf-8")
    (tmp / "b.txt").write_text(TEXT_B, encoding="utf-8")
    return ["a.txt", "b.txt"]


def _pages(tmp: Path) -> list[str]:
    (tmp / "a.html").write_text(HTML.format(TEXT_A), encoding="utf-8")
    (tmp / "b.html").write_text(HTML.format(TEXT_B), encoding="utf-8")
    return ["a.html", "b.html"]


def _archives(tmp: Path) -> list[str]:
    for name, text in (("a", TEXT_A), ("b", TEXT_B)):
        pages = [
            ("http://one.example/", "2020-01-01T00:00:00Z", HTML.format(text).encode()),
            ("http://two.example/", "2020-01-01T00:00:00Z", HTML.format(text[:150]).encode()),
        ]
        (tmp / f"{name}.warc.gz").write_bytes(_warc(pages))
    return ["a.warc.gz", "b.warc.gz"]


CASES: dict[str, tuple[Callable[[Path], list[str]], list[str], list[str]]] = {
    # parameter: (inputs, the options before, the options after)
    "shingle": (_texts, [], ["--shingle", "char:9"]),
    "stopwords": (_texts, [], ["--stopwords", "english"]),
    "stem": (_texts, [], ["--stem", "english"]),
    "tokenizer": (_texts, [], ["--tokenizer", "jieba"]),
    "fingerprint": (_texts, [], ["--fingerprint", "rabin"]),
    "strip_punctuation": (_texts, [], ["--strip-punctuation"]),
    "sketches": (_texts, [], ["--sketches", "all"]),
    "preset": (
        _texts,
        ["--sketches", "supershingle"],
        ["--sketches", "supershingle", "--preset", "altavista-variant"],
    ),
    "simhash_bits": (
        _texts,
        ["--sketches", "simhash"],
        ["--sketches", "simhash", "--simhash-bits", "128"],
    ),
    "projection": (
        _texts,
        ["--sketches", "simhash"],
        ["--sketches", "simhash", "--projection", "sign"],
    ),
    "num_perm": (_texts, [], ["--num-perm", "64"]),
    "seed": (_texts, [], ["--seed", "7"]),
    "as_json": (_texts, [], ["--json"]),
    "explain": (_texts, [], ["--explain"]),
    "color": (_texts, ["--explain"], ["--explain", "--color", "always"]),
    "html_extract": (_pages, [], ["--html-extract", "main"]),
    "url_a": (_archives, [], ["--url-a", "http://two.example/"]),
    "url_b": (_archives, [], ["--url-b", "http://two.example/"]),
}
"""How each option of ``compare`` is seen to change what it prints."""


def _compare(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main(["compare", *map(str, args)])
    printed = capsys.readouterr()
    return code, printed.out, printed.err


def test_the_table_covers_every_option_compare_lists() -> None:
    listed = {p.name for p in compare_command.params if isinstance(p, click.Option)}
    assert listed - {"help"} == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_every_option_of_compare_changes_what_it_prints(
    name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    inputs, before, after = CASES[name]
    files = inputs(tmp_path)
    code, plain, err = _compare(capsys, *files, *before)
    assert code == 0, err
    code, changed, err = _compare(capsys, *files, *after)
    assert code == 0, err
    assert changed != plain, name


@pytest.mark.parametrize(
    "args",
    [
        ["--threshold", "0.5"],
        ["--bands", "4"],
        ["--rows", "4"],
        ["--max-bucket-size", "10"],
        ["--family", "bands"],
        ["--sketch", "minhash"],
        ["--method", "simhash"],
        ["--bbits", "4"],
        ["--weighting", "tfidf"],
        ["--hamming", "3"],
        ["--hamming-blocks", "4"],
        ["--idf-low", "0.2"],
        ["--idf-high", "0.3"],
    ],
)
def test_compare_does_not_offer_options_it_has_no_use_for(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert args[0] not in command_options(compare_command)
    files = [tmp_path / name for name in _texts(tmp_path)]
    code, _, err = _compare(capsys, *files, *args)
    assert code == 2
    assert f"No such option '{args[0]}'" in err
    assert "--help" in err


def test_not_for_compare_names_shared_options() -> None:
    shared = {p.name for p in leaf_commands()["dedup"].params}
    assert shared >= NOT_FOR_COMPARE


@pytest.mark.parametrize(
    ("inputs", "args", "named", "words"),
    [
        (_texts, ["--color", "never"], "--color", "add --explain or drop it"),
        (_texts, ["--json", "--explain", "--color", "always"], "--color", "not JSON"),
        (_texts, ["--html-extract", "text"], "--html-extract", "neither A nor B is one"),
        (_texts, ["--url-b", "http://two.example/"], "--url-b", "is not one"),
        (_texts, ["--preset", "bing"], "--preset", "add --sketches oph,supershingle"),
        (
            _texts,
            ["--sketches", "oph,minhash", "--projection", "sign"],
            "--projection",
            "add --sketches minhash,oph,simhash",
        ),
    ],
)
def test_options_that_would_do_nothing_here_are_refused_by_name(
    inputs: Callable[[Path], list[str]],
    args: list[str],
    named: str,
    words: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    files = [tmp_path / name for name in inputs(tmp_path)]
    code, out, err = _compare(capsys, *files, *args)
    assert code == 2
    assert out == ""
    (line,) = err.splitlines()
    assert line.startswith(f"error: {named} ")
    assert words in line
    assert set(OPTION.findall(line)) <= command_options(compare_command) | {"--help"}


@pytest.mark.parametrize(("a", "b"), [("", ""), ("...!!!", "???"), ("one two", "three")])
def test_compare_of_texts_without_shingles_matches_nothing(
    a: str, b: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.txt").write_text(a, encoding="utf-8")
    (tmp_path / "b.txt").write_text(b, encoding="utf-8")
    files = [tmp_path / "a.txt", tmp_path / "b.txt"]
    code, out, err = _compare(capsys, *files, "--sketches", "all")
    assert code == 0, err
    assert "no shingles in A" in out
    assert "no shingles in B" in out
    estimates = re.findall(r"estimate: \S+ +(\S+)", out)
    assert len(estimates) > 10
    assert set(estimates) == {"0.0000"}
    assert "0 of 6 (no shingles)" in out
    assert "- (no shingles: no match)" in out
    code, out, err = _compare(capsys, *files, "--json", "--sketches", "all")
    record = json.loads(out)
    assert set(record["estimates"].values()) == {0.0}
    assert record["simhash_distance"] is None
    assert record["shared_features"] == 0


def test_compare_says_when_short_texts_are_exact_copies(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text("Two Words", encoding="utf-8")
    _, out, _ = _compare(capsys, tmp_path / "a.txt", tmp_path / "b.txt")
    assert "no shingles in A" in out
    assert "A and B are exact copies" in out


# --- plan -----------------------------------------------------------------------------------------


@pytest.mark.usefixtures("installed")
def test_plan_warns_of_a_sample_too_small_and_states_its_size(tmp_path: Path) -> None:
    done = run("plan", SAMPLE, "--sample", "2", "-o", tmp_path / "plan.toml")
    assert done.returncode == 0, done.stderr
    (warning,) = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert "the sample is too small to predict from: 2 of 2,310 documents" in warning
    assert "bytes of text" in warning
    assert "raise --sample " in warning
    assert set(OPTION.findall(warning)) <= command_options(leaf_commands()["plan"])
    # The rates are not a few kilobytes' fixed costs scaled up: seconds, not minutes.
    seconds = re.search(r"predicted    : [\d,]+ candidates, ([\d,.]+) s", done.stdout)
    assert seconds is not None
    assert float(seconds.group(1).replace(",", "")) < 30


@pytest.mark.usefixtures("installed")
def test_plan_refuses_a_byte_budget_of_one_document(tmp_path: Path) -> None:
    done = run("plan", SAMPLE, "--sample-mb", "0.0001", "-o", tmp_path / "plan.toml")
    assert done.returncode == 2, done.stderr
    assert "error: plan.sample_bytes (--sample-mb) of 104 bytes" in done.stderr
    assert "no pair to measure" in done.stderr
    assert not (tmp_path / "plan.toml").exists()


@pytest.mark.usefixtures("installed")
def test_plan_of_a_prefix_config_says_the_family_is_the_problem(tmp_path: Path) -> None:
    config = tmp_path / "p.toml"
    config.write_text('[lsh]\nfamily = "prefix"\n', encoding="utf-8")
    done = run("plan", SAMPLE, "--config", config, "-o", tmp_path / "plan.toml")
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert "lsh.family 'prefix'" in line
    assert "prefix filtering is exact" in line
    assert "remove family from the config's [lsh] table" in line
    assert "use one of" not in line
    assert set(OPTION.findall(line)) <= command_options(leaf_commands()["plan"]) | {"--help"}


@pytest.mark.parametrize("value", ["canonical", "oph,nonsense", ","])
def test_sketches_compare_cannot_make_are_refused(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = [tmp_path / name for name in _texts(tmp_path)]
    code, out, err = _compare(capsys, *files, "--sketches", value)
    assert code == 2
    assert out == ""
    assert "--sketches" in err
    assert "oph, minhash" in err
