// Makes Swift's `Synchronization.Mutex` visible to ThreadSanitizer on Linux (scripts/tsan.sh
// preloads it). The mutex's uncontended paths are inlined into our instrumented code, but
// under contention the lock is handed over by the kernel (a PI futex) inside
// libswiftSynchronization, which is not instrumented: TSan never sees that acquire/release
// and reports every access guarded by a contended Mutex as a race. These wrappers call the
// library's slow paths and tell TSan about the acquire (after locking) and the release
// (before unlocking), on the mutex's own address, the address its inlined atomics use.
//
// Swift calling convention: `self` (the handle's address) comes in the swift_context
// register (swiftself), the thread id in the first argument register.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>

extern void __tsan_acquire(void *addr);
extern void __tsan_release(void *addr);

#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define TRY_LOCK_SLOW "$s15Synchronization12_MutexHandleV12_tryLockSlowSbyF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"

typedef __attribute__((swiftcall)) void (*lock_slow_t)(uint32_t, __attribute__((swift_context)) void *);
typedef __attribute__((swiftcall)) bool (*try_lock_slow_t)(__attribute__((swift_context)) void *);
typedef __attribute__((swiftcall)) void (*unlock_slow_t)(__attribute__((swift_context)) void *);

__attribute__((swiftcall)) void lock_slow(uint32_t thread, __attribute__((swift_context)) void *handle) __asm__(LOCK_SLOW);
__attribute__((swiftcall)) void lock_slow(uint32_t thread, __attribute__((swift_context)) void *handle) {
    static lock_slow_t real;
    if (!real) real = (lock_slow_t)dlsym(RTLD_NEXT, LOCK_SLOW);
    real(thread, handle);
    __tsan_acquire(handle);
}

__attribute__((swiftcall)) bool try_lock_slow(__attribute__((swift_context)) void *handle) __asm__(TRY_LOCK_SLOW);
__attribute__((swiftcall)) bool try_lock_slow(__attribute__((swift_context)) void *handle) {
    static try_lock_slow_t real;
    if (!real) real = (try_lock_slow_t)dlsym(RTLD_NEXT, TRY_LOCK_SLOW);
    bool locked = real(handle);
    if (locked) __tsan_acquire(handle);
    return locked;
}

__attribute__((swiftcall)) void unlock_slow(__attribute__((swift_context)) void *handle) __asm__(UNLOCK_SLOW);
__attribute__((swiftcall)) void unlock_slow(__attribute__((swift_context)) void *handle) {
    static unlock_slow_t real;
    if (!real) real = (unlock_slow_t)dlsym(RTLD_NEXT, UNLOCK_SLOW);
    __tsan_release(handle);
    real(handle);
}
