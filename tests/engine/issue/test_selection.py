"""Which repro runs first, and which ones are tried next (issue #21 item 3, issue #22)."""

from __future__ import annotations

from app.engine.issue.selection import alternates, repro_candidates, select_repro

FENCE = "```"


def post(login: str, body: str, when: str) -> dict:
    return {"user": {"login": login, "type": "User"}, "body": body, "created_at": when,
            "html_url": f"https://github.com/o/r/issues/1#{login}-{when}"}


def py(code: str) -> str:
    return f"{FENCE}python\n{code}\n{FENCE}"


LONG = "import torch\n" + "\n".join(f"a{i} = torch.ones({i})" for i in range(6)) + "\nraise RuntimeError('x')"


def test_the_control_is_never_chosen_while_a_repro_exists():
    body = (f"### Describe the bug\n{py('import torch' + chr(10) + 'raise RuntimeError(1)')}\n\n### Expected behavior\n"
            f"{py(LONG)}")
    chosen = select_repro(repro_candidates(post("op", body, "t1"), []))
    assert chosen.role == "repro" and chosen.source.startswith("import torch\nraise") and chosen.trusted
    assert chosen.why == "the original poster's latest repro" and chosen.where == "the issue body"


def test_strangers_run_only_as_alternates_after_the_posters_blocks():
    issue = post("op", py(LONG) + "\n\nalso:\n" + py("import torch\nprint(torch.ones(1))"), "t1")
    comments = [post("stranger", py("print(2)"), "t2"), post("triager", py("print(3)"), "t3")]
    candidates = repro_candidates(issue, comments)
    chosen = select_repro(candidates, {"triager"})
    assert chosen.author == "triager" and chosen.trusted  # a triager's shorter repro replaces the poster's
    others = alternates(candidates, chosen, {"triager"})
    assert [o.author for o in others] == ["op", "op", "stranger"]
    assert not others[-1].trusted


def test_with_no_posters_code_a_strangers_runs_but_cannot_close():
    chosen = select_repro(repro_candidates(post("op", "it fails", "t1"), [post("stranger", py("print(2)"), "t2")]))
    assert chosen.author == "stranger" and not chosen.trusted and "cannot close" in chosen.why


def test_a_longer_output_block_tagged_python_is_never_chosen_over_the_code():
    # Real shape (#110620): the code, then its printed module repr in a ```python block under "Output".
    printed = "y_1 = RReLU(\n  lower=tensor([-10.0000, -9.5000,\n    -9.0000, -8.5000]), upper=0.3333\n)\n\ny_2 = tensor([-2.29, -2.17])"
    body = (f"### 🐛 Describe the bug\n\n`nn.RReLU` behaves like a linear function, however `torch.rrelu` works as expected\n\n"
            f"{py('import torch' + chr(10) + 'x = torch.ones(2)' + chr(10) + 'y = torch.nn.RReLU(x)')}\n\n#### Output\n\n{py(printed)}")
    candidates = repro_candidates(post("op", body, "t1"), [])
    chosen = select_repro(candidates)
    assert chosen.role == "repro" and chosen.source.startswith("import torch") and chosen.self_contained
    assert alternates(candidates, chosen) == []


def test_a_later_block_that_only_defines_a_module_is_not_chosen_over_a_runnable_one():
    # Real shape (#136662): a maintainer's reduction, then a pasted FX graph dump (a class whose
    # forward is never called) in a later comment.
    reduction = "import torch\nx = torch.ones(2, requires_grad=True)\nprint(torch.compile(torch.sin)(x))"
    dump = "import torch\nclass GraphModule(torch.nn.Module):\n    def forward(self, x):\n        return x.sin()"
    comments = [post("maintainer", py(reduction), "t2"), post("maintainer", py(dump), "t3")]
    chosen = select_repro(repro_candidates(post("op", "", "t1"), comments))
    assert chosen.source.startswith(reduction)
