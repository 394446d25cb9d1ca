"""The usage Anthropic reports for a two-call conversation with prompt caching: the first call
writes 2,000 tokens to the cache, the second reads them back and writes 30 more. Anthropic's
``input_tokens`` leaves out the tokens written to and read from the cache, so the harness's
totals are 2,005 + 2,037 input tokens, 2,000 of them cached, 2,030 written, 14 output.
Shared by the tests of the viewer, ``reactloop cost`` and the eval's pricing."""

FIRST = {"input_tokens": 5, "cache_creation_input_tokens": 2000, "output_tokens": 10}
SECOND = {
    "input_tokens": 7,
    "cache_creation_input_tokens": 30,
    "cache_read_input_tokens": 2000,
    "output_tokens": 4,
}
