// Note [Blocking waits of core code] in blocking.h.
#include "runtime/blocking.h"

namespace hrx {

namespace {
BlockingHooks g_hooks;
}  // namespace

void set_blocking_hooks(BlockingHooks hooks) { g_hooks = hooks; }

BlockingWait::BlockingWait() {
    if (g_hooks.enter) token_ = g_hooks.enter();
}

BlockingWait::~BlockingWait() {
    if (token_ && g_hooks.leave) g_hooks.leave(token_);
}

}  // namespace hrx
