from app.engine.verdict.same_error import error_key
from app.engine.verdict.signature import make_signature


def test_the_key_is_the_repro_signature_of_the_error():
    message = "shape '[2, 3]' is invalid for input of size 5\nmore context"
    assert error_key("RuntimeError", message) == make_signature("RuntimeError", message).text
    assert error_key("torch._dynamo.exc.Unsupported", "call_function BuiltinVariable(open)") == \
        error_key("Unsupported", "call_function BuiltinVariable(open)")


def test_an_error_too_generic_to_tell_bugs_apart_has_no_key():
    assert error_key("AssertionError", "") == ""
    assert error_key("AssertionError", "False") == ""
    assert error_key("", "some long message here") == ""
