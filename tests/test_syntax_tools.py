"""The language outside the simulator (issue 25, item 5): the Pygments
lexer (every keyword of the grammar is a keyword), the textX registration
(`textx list-languages`, `textx check` on every example), the docs site's
```sq blocks, and "did you mean" for a misspelt keyword."""
from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys

import pytest
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename
from pygments.token import Error, Keyword, Name

import serq
from serq.core.errors import ParseError
from serq.syntax.lexer import BUILTINS, DECLARATIONS, KEYWORDS, SUPPLIED, SerqLexer

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = sorted(glob.glob(os.path.join(ROOT, "examples", "**", "*.sq"), recursive=True))


def grammar_keywords() -> set[str]:
    """Every word the grammar (metamodel/*.tx) matches literally: the quoted
    words of its rules and the words of its keyword regexes, comments left out."""
    words: set[str] = set()
    for path in glob.glob(os.path.join(ROOT, "metamodel", "*.tx")):
        text = open(path, encoding="utf-8").read()
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        text = re.sub(r"//[^\n]*", " ", text)
        words |= set(re.findall(r"'([A-Za-z_]\w*)'", text))
        for body in re.findall(r"/\((\w+(?:\|\w+)+)\)\\b/", text):  # StmtKeyword's regexes
            words |= set(body.split("|"))
    return words


def test_the_walk_finds_the_grammar():
    kw = grammar_keywords()
    assert {"stage", "run", "pool", "hold", "fork", "join", "scheduler", "admission"} <= kw
    assert "latency" in kw and "belongs" not in kw  # a word of a comment is no keyword


@pytest.mark.parametrize("word", sorted(grammar_keywords()))
def test_every_grammar_keyword_is_highlighted(word):
    tokens = [(t, v) for t, v in SerqLexer().get_tokens(f"{word} x") if v.strip()]
    assert tokens[0] == (tokens[0][0], word) and tokens[0][0] in Keyword, tokens


def test_word_lists_follow_the_language():
    from serq.frontend.syntax.names import (ARITH, CONTEXT, DRAWS, ENGINE_LISTS, OBS_AGGREGATES,
                                     OBSERVABLES, RESERVED)
    keywords = set(KEYWORDS) | set(DECLARATIONS)
    assert keywords == grammar_keywords()
    calls = set(ARITH) | set(DRAWS) | set(OBSERVABLES) | set(OBS_AGGREGATES)
    assert set(BUILTINS) == calls - keywords
    assert set(SUPPLIED) == (RESERVED | set(CONTEXT)) - set(ENGINE_LISTS) - keywords


def test_names_calls_and_supplied_names():
    toks = [(t, v) for t, v in SerqLexer().get_tokens(
        "let size = 2; run svc (~exp(1) + queue(svc) + now); observe stage_x = used(kv);")
        if v.strip()]
    kinds = dict((v, t) for t, v in toks)
    assert kinds["let"] in Keyword.Declaration and kinds["run"] in Keyword
    assert kinds["size"] in Name and kinds["size"] not in Name.Builtin  # bound by `let`
    assert kinds["exp"] in Name.Builtin and kinds["used"] in Name.Builtin
    assert kinds["now"] in Name.Builtin.Pseudo
    assert kinds["stage_x"] is Name and kinds["svc"] is Name


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: os.path.relpath(p, ROOT))
def test_examples_lex_without_errors(path):
    text = open(path, encoding="utf-8").read()
    tokens = list(SerqLexer().get_tokens(text))
    assert not [v for t, v in tokens if t in Error]
    assert "".join(v for _, v in tokens) == text if text.endswith("\n") else text + "\n"


def test_pygments_finds_the_lexer_by_entry_point():
    assert isinstance(get_lexer_by_name("sq"), SerqLexer)
    assert isinstance(get_lexer_for_filename("model.sq"), SerqLexer)


def test_the_lexer_imports_no_runtime():
    code = ("import sys, serq.syntax.lexer\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('simpy', 'numpy', 'textx', 'scipy') or m.startswith(('serq.runtime', "
            "'serq.frontend'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_docs_sq_blocks_use_the_lexer():
    markdown = pytest.importorskip("markdown")  # the docs extra's (mkdocs)
    yaml = pytest.importorskip("yaml")

    class _Loader(yaml.SafeLoader):
        pass
    _Loader.add_multi_constructor("", lambda loader, suffix, node: None)
    conf = yaml.load(open(os.path.join(ROOT, "mkdocs.yml"), encoding="utf-8"), _Loader)
    ext = next(e for e in conf["markdown_extensions"]
               if isinstance(e, dict) and "pymdownx.highlight" in e)
    html = markdown.markdown("```sq\nstage svc : fifo;\nhold kv (1) { }\n```\n\n"
                             "```sq-refused\npool p { cap 1; }\n```\n",
                             extensions=["pymdownx.superfences", "pymdownx.highlight"],
                             extension_configs={"pymdownx.highlight":
                                                ext["pymdownx.highlight"]})
    assert '<span class="kd">stage</span>' in html and '<span class="k">hold</span>' in html
    assert '<span class="kd">pool</span>' in html and '<span class="k">cap</span>' in html


# -------------------------------------------------------------------- textX
def _textx() -> list[str]:
    exe = shutil.which("textx", path=os.path.dirname(sys.executable)) or shutil.which("textx")
    assert exe, "the `textx` command (textX-dev, in the test extra) is not installed"
    return [exe]


def test_textx_lists_the_language():
    done = subprocess.run(_textx() + ["list-languages"], capture_output=True, text=True,
                          check=True)
    out = done.stdout + done.stderr  # textX-dev's messages go to either
    line = next(ln for ln in out.splitlines() if ln.startswith("serq "))
    assert "*.sq" in line and "serq-simpy" in line


def test_textx_checks_every_example():
    done = subprocess.run(_textx() + ["check", *EXAMPLES], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    ok = [ln for ln in (done.stdout + done.stderr).splitlines() if ln.endswith(": OK.")]
    assert len(ok) == len(EXAMPLES), done.stdout + done.stderr


def test_textx_check_reports_the_front_ends_message(tmp_path):
    bad = tmp_path / "bad.sq"
    bad.write_text("stage svc : fifo;\nstge other : fifo;\n")
    done = subprocess.run(_textx() + ["check", str(bad)], capture_output=True, text=True)
    out = done.stdout + done.stderr
    assert done.returncode != 0
    assert f"{bad}:2:1: unexpected `stge` at top level" in out
    assert "help: did you mean `stage`?" in out


def test_the_registered_metamodel_parses_like_the_front_end():
    from textx import metamodel_for_language
    mm = metamodel_for_language("serq")
    model = mm.model_from_file(os.path.join(ROOT, "examples", "single-turn", "mg1.sq"))
    assert [type(i).__name__ for i in model.items][:2] == ["LetItem", "StageDecl"]


# --------------------------------------------------------- did you mean
@pytest.mark.parametrize("source, message, hint", [
    ("stge svc : fifo;", "unexpected `stge` at top level", "`stage`"),
    ("stage svc : fifo;\nsesion { turn; }", "unexpected `sesion` at top level", "`session`"),
    ("session { turn; hld kv (1) { } }", "unknown statement `hld`", "`hold`"),
    ("session { turn; obsrve x = 1; }", "unknown statement `obsrve`", "`observe`"),
    ("session { turn; relase(kv); }", "unknown statement `relase`", "`release`"),
    ("run { horizn 5; }", "unknown run option `horizn`", "`horizon`"),
    ("pool p { evcit lru; }", "unknown pool option `evcit`", "`evict`"),
])
def test_a_misspelt_keyword_gets_did_you_mean(source, message, hint):
    with pytest.raises(ParseError) as info:
        serq.load(source=source)
    assert info.value.message == message
    assert info.value.help == f"did you mean {hint}?"


def test_a_word_far_from_every_keyword_gets_no_hint():
    with pytest.raises(ParseError) as info:
        serq.load(source="banana svc : fifo;")
    assert info.value.help is None
