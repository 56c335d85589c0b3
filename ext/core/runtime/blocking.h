// Note [Blocking waits of core code]: core code never touches Python, but the
// binding calls it holding the GIL, so that the common path (nothing to wait
// for) pays nothing for releasing it. A core wait that may block on another
// thread (for room in a full runtime, for a host guard, on a large host copy)
// runs inside a BlockingWait scope instead. The binding installs hooks once
// (set_blocking_hooks) that release the GIL for the scope and take it back
// after: lane and callback threads may need the GIL to finish the very work
// waited for. Without hooks (C++ callers, lane threads) a scope does nothing.
#pragma once

namespace hrx {

struct BlockingHooks {
    // Called on entering a scope; returns what leave needs (nullptr: nothing was released).
    void* (*enter)() = nullptr;
    void (*leave)(void* token) = nullptr;
};

// Installs the hooks (before any core call that may block; not thread-safe against running scopes).
void set_blocking_hooks(BlockingHooks hooks);

class BlockingWait {
public:
    BlockingWait();
    ~BlockingWait();
    BlockingWait(const BlockingWait&) = delete;
    BlockingWait& operator=(const BlockingWait&) = delete;

private:
    void* token_ = nullptr;
};

}  // namespace hrx
