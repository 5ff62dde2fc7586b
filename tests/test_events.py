import asyncio

from searchain.events import emit, listening


def test_events_reach_the_listener_and_stop_after_the_block():
    seen: list[dict] = []
    with listening(seen.append):
        emit("round", n=1)
    emit("round", n=2)
    assert [(e["event"], e["n"]) for e in seen] == [("round", 1)]


def test_listener_follows_to_thread_and_is_isolated_between_tasks():
    async def one(tag: str) -> list[dict]:
        got: list[dict] = []
        with listening(got.append):
            await asyncio.to_thread(emit, "answer", text=tag)
        return got

    async def both():
        return await asyncio.gather(one("a"), one("b"))

    a, b = asyncio.run(both())
    assert [e["text"] for e in a] == ["a"] and [e["text"] for e in b] == ["b"]


def test_a_failing_listener_does_not_raise():
    def boom(_: dict) -> None:
        raise RuntimeError("viewer crashed")

    seen: list[dict] = []
    with listening(boom):
        emit("round", n=1)  # must not raise
        with listening(seen.append):
            emit("round", n=2)
    assert [e["n"] for e in seen] == [2]
