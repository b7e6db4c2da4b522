"""What the runner takes from a target: its regular top-level module files, as
text, bounded; nothing from its __pycache__ or its subfolders, and nothing it
could hang on or read forever."""

from __future__ import annotations

import importlib.util
import os
import py_compile
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from checks.intake import MAX_BYTES, MAX_FILES, IntakeError, place, read_files
from checks.target import ROOT
from checks.tests.conftest import Variant


def test_the_top_level_module_files_are_taken_as_text_and_nothing_else(tmp_path: Path) -> None:
    (tmp_path / "naming.py").write_text("A = 'é'\n", encoding="utf-8")
    (tmp_path / ".#naming.py").symlink_to("elsewhere")  # an editor's lock: no module's name
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "inner.py").write_text("B = 1\n")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "naming.cpython-311.pyc").write_bytes(b"planted")
    assert read_files(tmp_path) == {"naming.py": "A = 'é'\n"}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are a POSIX thing")
def test_a_fifo_named_like_a_module_is_refused_without_waiting_on_it(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "naming.py")
    found: list[BaseException] = []
    reader = threading.Thread(target=lambda: found.append(pytest.raises(IntakeError, read_files, tmp_path).value),
                              daemon=True)
    reader.start()
    reader.join(30)  # bounded: a FIFO opened for reading would wait here for a writer forever
    assert not reader.is_alive() and found
    assert "naming.py: a FIFO, not a regular file" in str(found[0])


def test_a_link_to_an_endless_device_is_refused_without_being_read(tmp_path: Path) -> None:
    (tmp_path / "naming.py").symlink_to("/dev/zero")
    with pytest.raises(IntakeError, match="naming.py: a symbolic link, not a regular file"):
        read_files(tmp_path)


def test_a_link_to_the_reference_is_refused_file_or_folder(tmp_path: Path) -> None:
    (tmp_path / "naming.py").symlink_to(ROOT / "solution" / "naming.py")
    with pytest.raises(IntakeError, match="a symbolic link"):
        read_files(tmp_path)
    (tmp_path / "starter").symlink_to(ROOT / "solution")
    with pytest.raises(IntakeError, match="not a folder"):
        read_files(tmp_path / "starter")


def test_files_too_long_too_many_or_not_text_are_refused_each_with_its_reason(tmp_path: Path) -> None:
    long = tmp_path / "long"
    long.mkdir()
    (long / "naming.py").write_bytes(b"#" * (MAX_BYTES + 1))
    with pytest.raises(IntakeError, match="longer than"):
        read_files(long)
    many = tmp_path / "many"
    many.mkdir()
    for number in range(MAX_FILES + 1):
        (many / f"m{number}.py").write_text("")
    with pytest.raises(IntakeError, match=f"at most {MAX_FILES}"):
        read_files(many)
    binary = tmp_path / "binary"
    binary.mkdir()
    (binary / "naming.py").write_bytes(b"\xff\xfe")
    with pytest.raises(IntakeError, match="not UTF-8 text"):
        read_files(binary)


def test_a_placed_package_has_the_files_their_fresh_bytecode_and_the_references_layers(tmp_path: Path) -> None:
    package = place({"__init__.py": "", "naming.py": "A = 1\n"}, tmp_path / "package")
    assert (package / "naming.py").read_text() == "A = 1\n"
    data = Path(importlib.util.cache_from_source(str(package / "naming.py"))).read_bytes()
    assert int.from_bytes(data[4:8], "little") == 0b11  # checked against the text's hash at import
    layers = sorted(p.name for p in (ROOT / "solution").iterdir() if (p / "__init__.py").is_file() and p.name != "tests")
    assert layers and all((package / name / "__init__.py").is_file() for name in layers)
    assert not (package / "tests").exists()


def test_bytecode_planted_in_the_targets_cache_is_never_used_and_a_run_writes_nothing_there(
        variant: Variant) -> None:
    # Unchecked bytecode of the reference's namer, under the name the import system
    # looks for beside starter/naming.py (observed: used by the region copies, 7/9).
    directory = variant("starter")
    planted = Path(importlib.util.cache_from_source(str(directory / "naming.py")))
    py_compile.compile(str(ROOT / "solution" / "naming.py"), cfile=str(planted), doraise=True,
                       invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
    before = {p: p.read_bytes() for p in directory.rglob("*") if p.is_file()}
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run([sys.executable, "-m", "checks", "--target", str(directory), "5", "6"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, env={**env, "MOCK": "1"})
    assert done.returncode == 1, done.stdout[-1500:]
    assert {p: p.read_bytes() for p in directory.rglob("*") if p.is_file()} == before


def test_a_fifo_in_the_target_is_one_line_and_exit_2_not_a_hang(variant: Variant) -> None:
    directory = variant("starter")
    os.mkfifo(directory / "waiting.py")
    done = subprocess.run([sys.executable, "-m", "checks", "--target", str(directory), "1"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, env={**os.environ, "MOCK": "1"})
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().endswith("waiting.py: a FIFO, not a regular file; only regular files are taken")


def test_the_commit_is_read_from_the_repositorys_files_loose_packed_or_detached(tmp_path: Path) -> None:
    from checks.intake import commit_of
    first, second = "1" * 40, "2" * 40
    git = tmp_path / "repo" / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (tmp_path / "repo" / "starter").mkdir()
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "refs" / "heads" / "main").write_text(first + "\n")
    assert commit_of(tmp_path / "repo" / "starter") == first  # found from a folder inside it
    assert commit_of(tmp_path / "repo" / "starter", up=False) is None  # grading looks at the folder itself only
    (git / "refs" / "heads" / "main").unlink()
    (git / "packed-refs").write_text(f"# pack-refs with: peeled\n{second} refs/heads/main\n")
    assert commit_of(tmp_path / "repo") == second
    (git / "HEAD").write_text(first)
    assert commit_of(tmp_path / "repo") == first
    (git / "HEAD").write_text("ref: refs/heads/../../../../etc/passwd\n")
    assert commit_of(tmp_path / "repo") is None
    (git / "HEAD").unlink()
    os.mkfifo(git / "HEAD")  # never waited on
    assert commit_of(tmp_path / "repo") is None
