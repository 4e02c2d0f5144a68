"""Specs: one common test feeds every field an invalid value; dict and TOML round trips."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from neardup import (
    DedupConfig,
    LSHSpec,
    NeardupWarning,
    NormalizeSpec,
    ParameterError,
    ShingleSpec,
    SketchSpec,
    bands_rows,
    choose_bands,
)
from neardup.candidates import candidate_scheme
from neardup.errors import InputError
from neardup.params import (
    ConfigFile,
    EmbeddingSpec,
    MirrorSpec,
    OutputSpec,
    ReadSpec,
    UnitSpec,
    load_config,
)

# An invalid value for each kind of rule: wrong type, out of range, unknown option.
INVALID: dict[str, list[Any]] = {
    "a bool": ["yes", 1, None],
    "an int": [1.5, "3", True, -(2**70)],
    "a float": ["0.5", float("nan"), 2.0, -0.1],
    "one of": ["unknown", 3, None],
    "a non-empty str": ["", 7, None],
    "None or a non-empty str": ["", 7],
    "None or an int": [0.5, "3", -5],
    "None or one of": ["bogus", 1],
    "one of 1, 2, 4, 8": [3, "2", 2.0, True],
    "None or a str": [7, b"id"],
    "a text encoding Python knows": ["utf-9", "", None],
    "a ShingleSpec": ["word:5", None, {"k": 5}],
    "None or an EmbeddingSpec": ["all-MiniLM-L6-v2", {"model": "m"}, True],
    "None or a hex string": ["0x1f", "1123a0ec875b778cd0", 5, "0x1123a0ec875b778cz"],
    "a tuple of 'FIELD'": ["quality", ("",), ("a", "a:min"), (1,), None],
    "None, 'jieba' or 'tiktoken:NAME'": ["spacy", "tiktoken", "tiktoken:", "jieba:x", 7, ""],
    "None, a stop-word language": ["klingon", "words:", "words: ", "English", 7, ""],
}


def _invalid_values(allowed: str) -> list[Any]:
    for prefix, values in INVALID.items():
        if allowed.startswith(prefix):
            return values
    raise AssertionError(f"no invalid values declared for rule {allowed!r}")


SPECS = [
    NormalizeSpec,
    ShingleSpec,
    SketchSpec,
    LSHSpec,
    MirrorSpec,
    UnitSpec,
    EmbeddingSpec,
    DedupConfig,
    ReadSpec,
    OutputSpec,
]


@pytest.mark.parametrize(
    ("spec", "name"),
    [(spec, name) for spec in SPECS for name in spec._RULES],
    ids=lambda v: v if isinstance(v, str) else v.__name__,
)
def test_every_field_rejects_invalid_values_with_one_message_format(spec: Any, name: str) -> None:
    rule = spec._RULES[name]
    for value in _invalid_values(rule.allowed):
        with pytest.raises(ParameterError) as info:
            spec(**{name: value})
        assert str(info.value) == f"{spec.__name__}.{name} must be {rule.allowed}; got {value!r}."


def test_specs_round_trip_through_dicts() -> None:
    config = DedupConfig(
        sketch=SketchSpec(kind="minhash", num_perm=64, shingle=ShingleSpec(unit="char", k=7)),
        lsh=LSHSpec(threshold=0.6),
        keep="longest",
    )
    assert DedupConfig.from_dict(config.to_dict()) == config
    assert hash(config) == hash(DedupConfig.from_dict(config.to_dict()))


def test_a_kind_owns_its_options_and_only_they_count_for_compatibility() -> None:
    with pytest.raises(ParameterError, match=r"SketchSpec.bbits applies to kind 'bbit', not to"):
        SketchSpec(kind="oph", bbits=4)
    assert "bbits" not in SketchSpec(kind="oph").to_dict()
    assert SketchSpec(kind="bbit", bbits=4).to_dict()["bbits"] == 4
    # A dict an older version wrote holds every kind's options, at their defaults.
    every_field = {**SketchSpec(kind="bbit").to_dict(), "kind": "oph", "weighting": "tf"}
    assert SketchSpec.from_dict(every_field) == SketchSpec(kind="oph")
    assert SketchSpec(kind="simhash", weighting="tfidf", seed=7).with_kind("oph") == SketchSpec(
        kind="oph", seed=7
    )


def test_a_family_owns_its_fields_and_follows_the_kind() -> None:
    assert DedupConfig().lsh.family == "bands"
    assert DedupConfig(sketch=SketchSpec(kind="simhash")).lsh.family == "hamming"
    assert DedupConfig(sketch=SketchSpec(kind="supershingle")).lsh.family == "features"
    chosen = DedupConfig(sketch=SketchSpec(kind="supershingle"), lsh=LSHSpec(family="bands"))
    assert chosen.lsh.family == "bands"
    assert "hamming" not in chosen.to_dict()["lsh"]
    with pytest.raises(ParameterError, match=r"LSHSpec\.num_bands applies to family 'bands'"):
        LSHSpec(family="hamming", num_bands=4, num_rows=4)
    with pytest.raises(ParameterError, match="cannot pair 'simhash' signatures"):
        DedupConfig(sketch=SketchSpec(kind="simhash"), lsh=LSHSpec(family="bands"))


def test_unknown_keys_are_named() -> None:
    with pytest.raises(ParameterError, match=r"unknown key\(s\) 'treshold' in lsh for LSHSpec"):
        DedupConfig.from_dict({"lsh": {"treshold": 0.5}})


def test_cross_field_rules() -> None:
    with pytest.raises(ParameterError, match="given together"):
        LSHSpec(num_bands=4)
    with pytest.raises(ParameterError, match=r"at most SketchSpec.num_perm \(128\); got 20 \* 10"):
        DedupConfig(lsh=LSHSpec(num_bands=20, num_rows=10))
    with pytest.raises(ParameterError, match=r"at most SketchSpec.num_perm \(64\); got 16 \* 8"):
        DedupConfig(sketch=SketchSpec(num_perm=64), lsh=LSHSpec(num_bands=16, num_rows=8))


def test_the_number_of_slots_is_set_once_and_the_banding_follows_it(tmp_path: Path) -> None:
    assert "num_perm" not in LSHSpec().to_dict()
    with pytest.raises(TypeError):
        LSHSpec(num_perm=64)  # type: ignore[call-arg]
    toml = tmp_path / "c.toml"
    toml.write_text("[sketch]\nnum_perm = 64\n")
    config = load_config(toml).config
    b, r = choose_bands(0.8, 64)  # the banding follows the sketch's slots
    assert b * r <= 64
    assert candidate_scheme(config.sketch, config.lsh).describe()["label"] == f"b={b}, r={r}"
    # A dict an older version wrote keeps the banding's copy of num_perm: it is read and dropped.
    old = {**config.to_dict(), "lsh": {**config.to_dict()["lsh"], "num_perm": 64}}
    assert DedupConfig.from_dict(old) == config
    toml.write_text("[sketch]\nnum_perm = 64\n[lsh]\nnum_perm = 256\n")  # set on purpose
    with pytest.raises(ParameterError, match=r"lsh.num_perm \(256\) differs from sketch.num_perm"):
        load_config(toml)
    with pytest.raises(ParameterError, match="must be positive"):
        LSHSpec(false_positive_weight=0.0, false_negative_weight=0.0)


def test_given_bands_and_rows_are_used_as_they_are() -> None:
    assert bands_rows(LSHSpec(num_bands=20, num_rows=5), 128) == (20, 5)


@pytest.mark.parametrize("text", ["word", "word:", "5", "word:five"])
def test_shingle_spec_parse_rejects_malformed_text(text: str) -> None:
    with pytest.raises(ParameterError, match="UNIT:K"):
        ShingleSpec.parse(text)


def test_shingle_spec_parse_validates_the_parts() -> None:
    with pytest.raises(ParameterError, match=r"ShingleSpec\.unit must be one of"):
        ShingleSpec.parse(":5")
    with pytest.raises(ParameterError, match=r"ShingleSpec.k must be an int in \[1, 64\]"):
        ShingleSpec.parse("char:0")


def test_an_older_lsh_num_perm_is_compared_with_the_slots_the_kind_has() -> None:
    # canonical forms have one slot whatever num_perm says; older dicts synced lsh to it
    old = {"sketch": {"kind": "canonical", "num_perm": 64}, "lsh": {"num_perm": 1}}
    assert DedupConfig.from_dict(old).sketch.num_perm == 1
    with pytest.raises(ParameterError, match=r"lsh.num_perm \(64\) differs"):
        DedupConfig.from_dict({"sketch": {"kind": "canonical"}, "lsh": {"num_perm": 64}})


def test_a_bucket_cap_is_refused_where_no_bucket_is_paired() -> None:
    with pytest.raises(ParameterError, match="family 'prefix' finds every pair exactly"):
        DedupConfig(lsh=LSHSpec(family="prefix", max_bucket_size=50))
    assert DedupConfig(lsh=LSHSpec(family="prefix")).lsh.max_bucket_size == 1000
    # the embedding's cosine join, beside the exact family, caps its own buckets with it
    combined = EmbeddingSpec(model="m", with_shingles=True)
    config = DedupConfig(lsh=LSHSpec(family="prefix", max_bucket_size=50), embedding=combined)
    assert config.to_dict()["lsh"]["max_bucket_size"] == 50


def test_the_former_from_toml_still_loads_the_algorithm_with_a_warning(tmp_path: Path) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text("[lsh]\nthreshold = 0.7\n")
    with pytest.warns(NeardupWarning, match="DedupConfig.from_toml is deprecated"):
        config = DedupConfig.from_toml(toml)
    assert config == load_config(toml).config == DedupConfig(lsh=LSHSpec(threshold=0.7))
    toml.write_text('[lsh]\nthreshold = 0.7\n[read]\ntext_field = "body"\n')
    with (
        pytest.warns(NeardupWarning),
        pytest.raises(ParameterError, match="no longer holds: load it with"),
    ):
        DedupConfig.from_toml(toml)  # it would drop the [read] table


def test_config_loads_from_toml_and_names_the_file_on_error(tmp_path: Path) -> None:
    good = tmp_path / "good.toml"
    good.write_text(
        'keep = "longest"\n[lsh]\nthreshold = 0.7\n[sketch.shingle]\nunit = "char"\nk = 9\n'
    )
    config = load_config(good).config
    assert config.lsh.threshold == 0.7
    assert config.sketch.shingle == ShingleSpec(unit="char", k=9)
    assert config.keep == "longest"
    bad = tmp_path / "bad.toml"
    bad.write_text("[lsh]\nthreshold = 0.7\nbands = 3\n")
    with pytest.raises(ParameterError, match=rf"{bad}: unknown key\(s\) 'bands' in lsh"):
        load_config(bad)
    broken = tmp_path / "broken.toml"
    broken.write_text("[lsh\n")
    with pytest.raises(InputError, match="not valid TOML"):
        load_config(broken)
    with pytest.raises(InputError, match="cannot read config"):
        load_config(tmp_path / "missing.toml")


# --- the algorithm apart from the files -----------------------------------------------------------

FILE_SETTINGS = {
    "text_field": "body",
    "id_field": "",
    "encoding": "cp1252",
    "input_format": "csv",
    "html_field": "html",
    "html_extract": "main",
    "skip_bad_records": True,
    "batch_bytes": 1 << 20,
    "compress": "gzip",
    "annotate": "dup",
}
"""A value other than the default for every reading and writing setting."""


@pytest.mark.parametrize(("name", "value"), FILE_SETTINGS.items())
def test_dedup_config_takes_no_reading_or_writing_setting(name: str, value: Any) -> None:
    with pytest.raises(TypeError, match=name):
        DedupConfig(**{name: value})
    spec = ReadSpec if name in ReadSpec._RULES else OutputSpec
    assert getattr(spec(**{name: value}), name) == value


def test_read_and_output_specs_round_trip_through_dicts_and_say_where_ids_come_from() -> None:
    read = ReadSpec(**{k: v for k, v in FILE_SETTINGS.items() if k in ReadSpec._RULES})
    write = OutputSpec(compress="zstd", annotate="dup")
    assert ReadSpec.from_dict(read.to_dict()) == read
    assert OutputSpec.from_dict(write.to_dict()) == write
    assert hash(read) == hash(ReadSpec.from_dict(read.to_dict()))
    assert (ReadSpec().id_name, ReadSpec().id_required) == ("id", False)  # when a record has one
    assert (ReadSpec(id_field="key").id_name, ReadSpec(id_field="key").id_required) == ("key", True)
    assert (read.id_name, read.id_required) == (None, False)  # FILE:LINE always
    with pytest.raises(ParameterError, match=r"unknown key\(s\) 'keep' in read for ReadSpec"):
        ReadSpec.from_dict({"keep": "first"}, where="read")


def test_config_file_holds_read_and_output_tables(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text(
        'keep = "longest"\n[read]\ntext_field = "body"\nbatch_bytes = 4096\n'
        '[output]\ncompress = "zstd"\n',
        encoding="utf-8",
    )
    assert load_config(path) == ConfigFile(
        DedupConfig(keep="longest"),
        ReadSpec(text_field="body", batch_bytes=4096),
        OutputSpec(compress="zstd"),
    )
    path.write_text('[read]\ntext_feld = "body"\n', encoding="utf-8")
    with pytest.raises(ParameterError, match=rf"{path}: unknown key\(s\) 'text_feld'"):
        load_config(path)


def test_older_config_files_with_file_settings_at_the_top_are_read_with_a_warning(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.toml"
    path.write_text(
        'keep = "longest"\ntext_field = "body"\nskip_bad_records = true\ncompress = "gzip"\n'
        "[lsh]\nthreshold = 0.7\n",
        encoding="utf-8",
    )
    with pytest.warns(NeardupWarning) as caught:
        loaded = load_config(path)
    assert [str(w.message) for w in caught] == [
        f"{path}: key(s) text_field, skip_bad_records belong in the [read] table now, not at "
        "the top level: move them there (this version still reads them at the top level; the "
        "next will not)",
        f"{path}: key(s) compress belong in the [output] table now, not at the top level: move "
        "them there (this version still reads them at the top level; the next will not)",
    ]
    assert loaded == ConfigFile(
        DedupConfig(keep="longest", lsh=LSHSpec(threshold=0.7)),
        ReadSpec(text_field="body", skip_bad_records=True),
        OutputSpec(compress="gzip"),
    )
    path.write_text('text_field = "body"\n[read]\ntext_field = "text"\n', encoding="utf-8")
    with (
        pytest.warns(NeardupWarning),
        pytest.raises(ParameterError, match=r"text_field is given both at the top level and in"),
    ):
        load_config(path)
