"""`fuzz`: a fuzz seed or a fuzzed program -> a failing test, a verified fix, a draft PR (seed 000).

Started by a `workflow_dispatch` with `fuzz-seed` / `fuzzed-program` (the webhook router),
`/scrub fuzz <seed>` on an issue, or `scrub fuzz` (the CLI); `docs/fuzz-pipeline.md`.
"""

from app.domain import CommandRequest, NewRun, RunKind
from app.pipelines.fuzz.stages import STAGES
from app.pipelines.fuzz.state import FuzzState
from app.pipelines.kind import Kind, Start, Word

USAGE = "usage: /scrub fuzz <seed> (an integer seed of the repository's fuzzer)"


def from_comment(request: CommandRequest) -> NewRun | str:
    """`/scrub fuzz <seed>`: a fuzz run on the repository's default branch, or the usage."""
    seed = request.args.split()[0] if request.args.split() else ""
    if not seed.lstrip("-").isdigit():
        return USAGE
    return NewRun(kind=RunKind.fuzz, target=f"fuzz seed {seed}", trigger="comment:fuzz",
                  params={"repo": request.repo, "fuzz-seed": seed, "trigger": "comment", "issue": request.issue,
                          "requested_by": request.user},
                  started=f"fuzz run {{id}} started for seed {seed}")


KIND = Kind(
    name=RunKind.fuzz,
    stages=tuple(STAGES),
    state=FuzzState,
    words=(
        Word("fuzz", Start(from_comment), "run the repository's fuzzer with that seed; a failing test (and a\n"
             "  verified fix, when one is configured) lands as a draft PR from `scrub/fuzz-<seed>`",
             usage="fuzz <seed>"),
    ),
)
