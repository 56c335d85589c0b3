"""asyncio support for Completion: awaiting never blocks the event loop."""

from __future__ import annotations

import asyncio


async def _await(completion):
    if not completion.done():
        loop = asyncio.get_running_loop()
        future = loop.create_future()

        def wake(_completion):
            # Runs on a lane thread (holding the GIL): hand over to the loop.
            loop.call_soon_threadsafe(lambda: future.done() or future.set_result(None))

        completion.add_done_callback(wake)
        await future
    return completion.result()


def await_completion(completion):
    """The iterator behind ``await completion``."""
    return _await(completion).__await__()
