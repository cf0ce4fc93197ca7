from conftest import invoke


def test_estimate_runs_on_example_and_counts_tokens():
    r = invoke(["estimate", "examples/coding-session.json", "--model", "gpt-4o"])
    assert r.status == 0, r.stderr
    assert r.json["tokens"]["total"] > 1000
