"""asyncio support for Completion: awaiting never blocks the event loop."""

from __future__ import annotations

import asyncio


def _settle(future):
    if not future.done():  # the await may have been cancelled (a timeout)
        future.set_result(None)


async def _await(completion):
    if not completion.done():
        loop = asyncio.get_running_loop()
        future = loop.create_future()

        def wake(_completion):
            # Runs on the runtime's callback thread: hand over to the loop,
            # unless the loop is gone. After a timed-out or cancelled await
            # (asyncio.wait_for) the completion still finishes later, possibly
            # once asyncio.run has returned and closed the loop: nothing is
            # waiting then, so nothing is done.
            if loop.is_closed():
                return
            try:
                loop.call_soon_threadsafe(_settle, future)
            except RuntimeError:  # closed between the check and the call
                pass

        completion.add_done_callback(wake)
        await future
    return completion.result()


def await_completion(completion):
    """The iterator behind ``await completion``."""
    return _await(completion).__await__()
