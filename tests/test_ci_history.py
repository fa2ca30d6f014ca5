from app.ci_history import (
    Classification,
    Occurrence,
    SignatureHistory,
    from_dict_occurrence,
)


def test_the_label_is_the_first_that_applies():
    assert Classification("pr", same_repo=False, unstable=True, flaky=True).label == "fork"
    assert Classification("trunk", True, unstable=True, flaky=True).label == "unstable"
    assert Classification("pr", True, broken_trunk=True, flaky=True).label == "broken trunk"
    assert Classification("trunk", True, broken_trunk=True).label == "trunk"  # trunk is never broken trunk
    assert Classification("pr", True, flaky=True).label == "flaky"
    assert Classification("branch", True).label == "branch"


def test_an_occurrence_round_trips_through_json():
    occurrence = Occurrence("f" * 64, 12, attempt=2, pull_requests=(3,),
                            classification=Classification("pr", True, broken_trunk=None, evidence=("a", "b")))
    back = from_dict_occurrence(occurrence.to_dict())
    assert back == occurrence and back.classification.evidence == ("a", "b")
    assert occurrence.to_dict()["classification"]["label"] == "pr"


def test_trunk_occurrences_are_the_same_repositorys_trunk_runs():
    trunk = Occurrence("f", 1, classification=Classification("trunk", True))
    fork = Occurrence("f", 2, classification=Classification("trunk", False))
    pr = Occurrence("f", 3, classification=Classification("pr", True))
    assert SignatureHistory("f", (trunk, fork, pr)).trunk() == (trunk,)
